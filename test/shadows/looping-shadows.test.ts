import { afterEach, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore } from '../execution/support.js';
import { putDevelop, scenarioIdOf } from '../replay/support.js';
import { deployScenario, scriptScenario } from '../support/scenario-fixtures.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployedScenarioId, scoreAs, attachShadow, shadowWithRuns } from './support.js';
import type { ScenarioDocument } from '../../src/engine/index.js';

/**
 * Shadows whose runs loop to their time limit (issue 32). Each test has an app of its own: the looping runs spend the
 * shadow budget for 20–50 s (each is charged its whole time limit), so nothing may share it after them.
 */

let t: TestApp;
let alice: TestUser;
let bob: TestUser;

async function freshApp(label: string): Promise<void> {
  isolateJobStore(label);
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
  bob = await t.newUser();
}
afterEach(() => t.close());

const newScenario = (name: string, doc?: ScenarioDocument) => deployedScenarioId(t, alice, name, doc);
const score = (name: string, inputs: Record<string, unknown>) => scoreAs(t, alice, name, inputs);

it('leaves the champion\u2019s answers exactly as they are when its shadows throw or loop', async () => {
  await freshApp('shadow-throws-loops');
  await newScenario('steady', scriptScenario('out = a + 1;'));
  const scenarioId = await scenarioIdOf(t, alice.id, 'steady');
  const inputs = [{ a: 1 }, { a: 2 }, { a: 'x' }, {}, { a: 40 }];
  const without = [];
  for (const body of inputs) without.push(await score('steady', body));

  await putDevelop(t, scenarioId, scriptScenario('throw new Error("shadow fails");'));
  const throwing = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['out'] });
  await putDevelop(t, scenarioId, scriptScenario('while (true) {}'));
  const looping = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['out'] });
  expect([throwing.status, looping.status]).toEqual([201, 201]);

  const withShadows = [];
  for (const body of inputs) withShadows.push(await score('steady', body));
  const shape = (answers: request.Response[]) =>
    answers.map((answer) => [
      answer.status,
      answer.body.result ?? null,
      answer.body.code ?? null,
      answer.body.error ?? null,
    ]);
  expect(shape(withShadows)).toEqual(shape(without));

  const failedThrowing = await shadowWithRuns(t, alice, scenarioId, throwing.body.shadowId, 5);
  // Two inputs fail the champion too (INVALID_INPUT): both sides failed.
  expect(failedThrowing.report.failures).toMatchObject({
    onlyNew: 3,
    both: 2,
    newErrorCodes: { SCRIPT_ERROR: 3, INVALID_INPUT: 2 },
  });
  const failedLooping = await shadowWithRuns(t, alice, scenarioId, looping.body.shadowId, 5);
  expect(failedLooping.report.failures).toMatchObject({
    onlyNew: 3,
    both: 2,
    newErrorCodes: { TIME_LIMIT_EXCEEDED: 3, INVALID_INPUT: 2 },
  });
}, 60_000);

it('holds up neither its owner\u2019s sync scores nor another tenant\u2019s (the engine pool\u2019s fairness rules hold)', async () => {
  await freshApp('shadow-loop-fairness');
  const scenarioId = await newScenario('loop-shadowed', scriptScenario('out = a + 1;'));
  await putDevelop(t, scenarioId, scriptScenario('while (true) {} out = a;'));
  const attached = await attachShadow(t, alice, scenarioId, { version: 'develop', outputs: ['out'] });
  await deployScenario(t.services.db, bob.id, 'bob-steady', scriptScenario('out = a * 10;'));
  // Six live runs: six shadow runs of 1,000 ms each wait or run in the background lane now.
  for (let a = 0; a < 6; a += 1) expect((await score('loop-shadowed', { a })).status).toBe(200);
  for (let a = 0; a < 5; a += 1) {
    for (const [user, name, out] of [
      [alice, 'loop-shadowed', a + 1],
      [bob, 'bob-steady', a * 10],
    ] as const) {
      const begun = Date.now();
      const scored = await request(t.app)
        .post(`/api/scenario/code/remote/score?name=${name}`)
        .set('Score-Token', user.scoreToken)
        .send({ a });
      expect([scored.status, scored.body.result]).toEqual([200, { out }]);
      expect(Date.now() - begun).toBeLessThan(500);
    }
  }
  const shadow = await shadowWithRuns(t, alice, scenarioId, attached.body.shadowId, 6);
  expect(shadow.report.failures.onlyNew).toBe(shadow.report.replayed);
  expect(shadow.report.failures.newErrorCodes.TIME_LIMIT_EXCEEDED).toBe(shadow.report.replayed);
}, 60_000);
