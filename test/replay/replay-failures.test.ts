import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createLogger } from '../../src/logger.js';
import { MySqlReplayStore } from '../../src/replay/replay-store.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { getReplay, recordBatch, scenarioIdOf, startReplay } from './support.js';

/**
 * Issue 27, problem 2: a replay whose report write broke the connection was counted as an outage and
 * run again every ~31 s for ever, each time logging a line that held the SQL with inputs and results.
 * Only an outage is retried now; a write the database refuses while it answers ends the replay FAILED
 * with the reason, and no log line or stored reason holds the statement.
 */
let t: TestApp;
let alice: TestUser;
let scenarioId: string;
const lines: string[] = [];

/** What a knex query error looks like when the server closes the connection under a statement: its SQL, inputs included, first. */
function connectionClosedUnder(): Error {
  return Object.assign(
    new Error(
      'update `replays` set `report` = \'{"inputs":{"ssn":"123-45-6789"},"result":{"secret":"s3cr3t"}}\' - Connection lost: The server closed the connection.',
    ),
    {
      fatal: true,
      code: 'PROTOCOL_CONNECTION_LOST',
      sql: 'update `replays` set `report` = \'{"ssn":"123-45-6789"}\'',
    },
  );
}

beforeAll(async () => {
  isolateJobStore('replay-failures');
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  t = await createTestApp({ logger: createLogger('info', sink) });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  scenarioId = await scenarioIdOf(t, alice.id, 'double');
  await t.services
    .db('recording_settings')
    .insert({ scenario_id: Number(scenarioId), enabled: true, retention_days: 30, sync_sample_rate: 1, trace: false })
    .onConflict('scenario_id')
    .merge();
  await recordBatch(t, alice, 'double', [{ a: 1 }, { a: 2 }, { a: 3 }]);
});
afterEach(() => {
  jest.restoreAllMocks();
});
afterAll(() => t.close());

const ended = (replayId: string) =>
  waitFor(async () => {
    const { body } = await getReplay(t, alice, scenarioId, replayId);
    return body.state === 'FINISHED' || body.state === 'FAILED' ? body : undefined;
  }, 20_000);

describe('a replay whose report cannot be stored', () => {
  it('ends FAILED with the reason, once, when the write breaks the connection while MySQL answers, and logs no statement', async () => {
    const finish = jest.spyOn(MySqlReplayStore.prototype, 'finish').mockRejectedValue(connectionClosedUnder());
    // MySQL answers (the premise): the probe says so even when a loaded machine would keep `SELECT 1` past its 2 s.
    jest.spyOn(MySqlReplayStore.prototype, 'databaseAnswers').mockResolvedValue(true);
    const started = await startReplay(t, alice, scenarioId, { candidateVersion: '1', outputs: ['doubled'] });
    expect(started.status).toBe(202);
    const replay = await ended(started.body.replayId);
    expect(replay).toMatchObject({
      state: 'FAILED',
      error: 'The replay stopped: PROTOCOL_CONNECTION_LOST: Connection lost: The server closed the connection.',
    });
    // Not run again: the job ended with the replay.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(finish).toHaveBeenCalledTimes(1);
    expect((await getReplay(t, alice, scenarioId, started.body.replayId)).body.state).toBe('FAILED');
    const logged = lines.join('\n');
    expect(logged).toContain('replay failed');
    expect(logged).not.toContain('123-45-6789');
    expect(logged).not.toContain('s3cr3t');
    expect(logged).not.toContain('update `replays`');
  });

  it('tries again while MySQL is really unavailable, and finishes once it answers', async () => {
    jest.spyOn(MySqlReplayStore.prototype, 'finish').mockRejectedValueOnce(connectionClosedUnder());
    jest.spyOn(MySqlReplayStore.prototype, 'databaseAnswers').mockResolvedValueOnce(false);
    const started = await startReplay(t, alice, scenarioId, { candidateVersion: '1', outputs: ['doubled'] });
    const replay = await ended(started.body.replayId);
    expect(replay).toMatchObject({ state: 'FINISHED', report: { replayed: 3 } });
    expect(lines.join('\n')).not.toContain('123-45-6789');
  });
});
