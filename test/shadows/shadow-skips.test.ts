import { afterAll, beforeAll, expect, it } from '@jest/globals';
import request from 'supertest';
import { loadConfig } from '../../src/config/config.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { putDevelop, scenarioIdOf } from '../replay/support.js';
import { deployScenario, doublingScenario, scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { attachShadow, getShadow, storedShadowRuns } from './support.js';

/** A spent shadow budget (SHADOW_ENGINE_SHARE 0 here): sampled shadow runs are skipped and counted, the champion answers as ever. */

let t: TestApp;
let alice: TestUser;

beforeAll(async () => {
  isolateJobStore('shadow-skips');
  t = await createTestApp({
    configOverrides: {
      shadows: { ...loadConfig().shadows, engineShare: 0 },
      metrics: { ...loadConfig().metrics, enabled: true },
    },
  });
  alice = await t.newUser();
});
afterAll(() => t.close());

it('skips and counts every sampled shadow run, in the shadow and in Prometheus', async () => {
  await deployScenario(t.services.db, alice.id, 'starved', doublingScenario());
  const scenarioId = await scenarioIdOf(t, alice.id, 'starved');
  await putDevelop(t, scenarioId, scriptScenario('out = a * 3;'));
  const attached = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['doubled'] });
  for (let a = 1; a <= 6; a += 1) {
    const scored = await request(t.app)
      .post('/api/scenario/code/remote/score?name=starved')
      .set('Score-Token', alice.scoreToken)
      .send({ a });
    expect([scored.status, scored.body.result]).toEqual([200, { doubled: 2 * a }]);
  }
  const shadow = await waitFor(
    async () => {
      await t.services.shadows.writer.flush();
      const { body } = await getShadow(t, alice, scenarioId, attached.body.shadowId);
      return body.skipped >= 6 ? body : undefined;
    },
    10_000,
    100,
  );
  expect(shadow.skipped).toBe(6);
  expect(await storedShadowRuns(t, attached.body.shadowId)).toBe(0);
  const text = await t.services.metricsExposition?.render();
  expect(text).toContain('scoring_shadow_skips_total{reason="budget"} 6');
  expect(text).toContain('scoring_shadow_runs_total{outcome="succeeded"} 0');
});
