import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import pino from 'pino';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { DecisionRecorder, type DropReason } from '../../src/records/decision-recorder.js';
import { InputMasker } from '../../src/records/input-masking.js';
import { RecordingSettingsService } from '../../src/records/recording-settings-service.js';
import { RecordingSettingsStore } from '../../src/records/recording-settings-store.js';
import type { RunRecording } from '../../src/records/run-recorder.js';
import { ScenarioRunRecorder } from '../../src/records/scenario-run-recorder.js';
import type { DeployedScenario } from '../../src/scenarios/deployed-scenarios.js';
import { chain, input } from '../engine/support/scenario-builder.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { deployScenario } from '../support/scenario-fixtures.js';
import { scenarioIdOf } from './support.js';

/** Which runs are recorded (sampling of sync runs only) and that recording never fails a run. */

let t: TestApp;
let db: Knex;
let deployed: DeployedScenario;
beforeAll(async () => {
  t = await createTestApp();
  db = t.services.db;
  const owner = await t.newUser();
  await deployScenario(db, owner.id, 's', chain([input('a', 'INTEGER')], []));
  const scenarioId = Number(await scenarioIdOf(t, owner.id, 's'));
  deployed = {
    scenarioId,
    ownerId: owner.id,
    ownerName: owner.username,
    name: 's',
    versionId: 1,
    version: '1',
    cacheKey: `srr-${scenarioId}`,
    document: chain([input('a', 'INTEGER')], []),
  };
});
afterAll(() => t.close());

const outcome = { result: { a: 1 }, error: null, beganAt: new Date(), endedAt: new Date(), durationMicros: 5 };

function subject(random: () => number, masker = new InputMasker('s')) {
  const drops: Array<[number, DropReason]> = [];
  const recorder = new DecisionRecorder(
    new MySqlDecisionRecordStore(db),
    {
      batchSize: 100,
      flushIntervalMs: 10,
      maxBuffered: 100,
      onDropped: (count, reason) => drops.push([count, reason]),
    },
    pino({ level: 'silent' }),
  );
  const runRecorder = new ScenarioRunRecorder(
    new RecordingSettingsService(new RecordingSettingsStore(db)),
    masker,
    recorder,
    random,
  );
  return { runRecorder, recorder, drops };
}

const start = async (runRecorder: ScenarioRunRecorder, mode: 'SYNC' | 'ASYNC' | 'BATCH', id: string) =>
  (await runRecorder.start(deployed, { a: 1 }, { id, mode, requesterId: 1, requestId: id })) as
    | RunRecording
    | undefined;

describe('ScenarioRunRecorder', () => {
  it('samples sync runs by the rate (a draw below it records), and records async and batch runs whatever the draw', async () => {
    await new RecordingSettingsStore(db).save(deployed.scenarioId, {
      enabled: true,
      retentionDays: 30,
      syncSampleRate: 0.5,
      trace: false,
    });
    const low = subject(() => 0.4);
    const high = subject(() => 0.6);
    expect(await start(low.runRecorder, 'SYNC', 'srr-low')).toBeDefined();
    expect(await start(high.runRecorder, 'SYNC', 'srr-high')).toBeUndefined();
    expect(await start(high.runRecorder, 'ASYNC', 'srr-async')).toBeDefined();
    expect(await start(high.runRecorder, 'BATCH', 'srr-batch')).toBeDefined();
    await Promise.all([low.recorder.close(), high.recorder.close()]);
  });

  it('answers at once, without a promise, once the settings are cached', async () => {
    const { runRecorder, recorder } = subject(() => 0);
    await start(runRecorder, 'SYNC', 'srr-warm');
    const answer = runRecorder.start(
      deployed,
      { a: 1 },
      { id: 'srr-cached', mode: 'SYNC', requesterId: 1, requestId: 'x' },
    );
    expect(answer).not.toBeInstanceOf(Promise);
    await recorder.close();
  });

  it('never fails a run: a record that cannot be made is counted as unrecordable', async () => {
    class BrokenMasker extends InputMasker {
      override piiInputs(): readonly string[] {
        throw new Error('masking broke');
      }
    }
    const { runRecorder, recorder, drops } = subject(() => 0, new BrokenMasker('s'));
    const recording = await start(runRecorder, 'BATCH', 'srr-broken');
    expect(() => recording?.finish(outcome)).not.toThrow();
    expect(drops).toEqual([[1, 'unrecordable']]);
    await recorder.close();
  });
});
