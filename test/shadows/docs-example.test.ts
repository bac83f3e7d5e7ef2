import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { bearer, scenarioIdOf } from '../replay/support.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { shadowWithRuns } from './support.js';

/** The worked example of docs/live-tests.md, run through the API with the page's blocks as written (the scenario is docs/replay.md's). */

const page = readFileSync(new URL('../../docs/live-tests.md', import.meta.url), 'utf8');
const replayPage = readFileSync(new URL('../../docs/replay.md', import.meta.url), 'utf8');

function block(text: string, marker: string, name: string): string {
  const match = new RegExp(`<!-- ${marker}: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(text);
  if (!match) throw new Error(`no ${marker} block "${name}"`);
  return match[1];
}

let t: TestApp;
let alice: TestUser;
beforeAll(async () => {
  isolateJobStore('shadow-docs');
  t = await createTestApp();
  alice = await t.newUser();
});
afterAll(() => t.close());

describe('docs/live-tests.md, "A worked example"', () => {
  it('answers as version 1, gives the report the page shows, then splits 10 % sticky by customer and promotes', async () => {
    const scenarioYaml = block(replayPage, 'replay-example', 'scenario');
    const importYaml = (yaml: string, query: Record<string, string> = {}) =>
      request(t.app)
        .post('/api/scenario/import')
        .query(query)
        .set(bearer(alice))
        .set('content-type', 'application/yaml')
        .send(yaml);
    expect((await importYaml(scenarioYaml)).body.scenarios[0].outcome).toBe('CREATED');
    const id = await scenarioIdOf(t, alice.id, 'credit-scorecard');
    expect((await request(t.app).post(`/api/scenario/deploy/${id}`).set(bearer(alice))).status).toBe(204);
    const applications = JSON.parse(block(page, 'live-example', 'applications')) as Array<Record<string, unknown>>;
    const score = (body: Record<string, unknown>) =>
      request(t.app)
        .post('/api/scenario/code/remote/score?name=credit-scorecard')
        .set('Score-Token', alice.scoreToken)
        .send(body);
    const before = [];
    for (const body of applications) before.push((await score(body)).body.result);

    const candidate = scenarioYaml.replace('score >= 600', 'score >= 620');
    expect((await importYaml(candidate, { overwrite_develop: 'true' })).body.scenarios[0].outcome).toBe('UPDATED');
    const attached = await request(t.app)
      .post(`/api/scenario/${id}/shadows`)
      .set(bearer(alice))
      .send(JSON.parse(block(page, 'live-example', 'request')));
    expect(attached.status).toBe(201);

    const after = [];
    for (const body of applications) after.push((await score(body)).body.result);
    expect(after).toEqual(before);
    const shadow = await shadowWithRuns(t, alice, id, attached.body.shadowId, applications.length);
    expect(shadow).toMatchObject(JSON.parse(block(page, 'live-example', 'report')));

    // "The worked example, continued": a customerId input (version 2 ends the shadow), a 10 % sticky split, each customer on one arm, promote.
    const idLine = block(page, 'live-example', 'customer-input');
    const housingLine = scenarioYaml.split('\n').find((line) => line.includes('name: housing')) as string;
    const withId = (yaml: string) => yaml.replace(housingLine, `${housingLine}\n${idLine}`);
    expect((await importYaml(withId(scenarioYaml), { overwrite_develop: 'true' })).body.scenarios[0].outcome).toBe(
      'UPDATED',
    );
    expect((await request(t.app).post(`/api/scenario/deploy/${id}`).set(bearer(alice))).status).toBe(204);
    const ended = await request(t.app).get(`/api/scenario/${id}/shadows/${attached.body.shadowId}`).set(bearer(alice));
    expect(ended.body).toMatchObject({
      state: 'ENDED',
      endedReason: 'version 2 was deployed as champion',
      report: { replayed: applications.length },
    });
    expect((await importYaml(withId(candidate), { overwrite_develop: 'true' })).body.scenarios[0].outcome).toBe(
      'UPDATED',
    );

    const created = await request(t.app)
      .post(`/api/scenario/${id}/splits`)
      .set(bearer(alice))
      .send(JSON.parse(block(page, 'live-example', 'split')));
    expect(created.status).toBe(201);
    expect(created.body.arms).toEqual([
      { version: '2', champion: true, percent: 90 },
      { version: 'develop', champion: false, percent: 10 },
    ]);
    const application = { age: 30, income: 6000, housing: 'RENT' };
    const versions = async () => {
      const answered: string[] = [];
      for (let n = 1; n <= 200; n += 1) {
        const answer = await score({ customerId: `C-${n}`, ...application });
        // Score 610: version 2 approves at 600, the challenger refers under 620.
        expect([answer.status, answer.body.result.decision]).toEqual([
          200,
          answer.body.version === '2' ? 'APPROVE' : 'REVIEW',
        ]);
        answered.push(answer.body.version);
      }
      return answered;
    };
    const first = await versions();
    expect(await versions()).toEqual(first);
    const challengers = first.filter((version) => version === 'develop').length;
    // 10 % of 200 customers: the binomial 99 % interval is 20 ± 11.
    expect(challengers).toBeGreaterThanOrEqual(9);
    expect(challengers).toBeLessThanOrEqual(31);
    const split = await waitFor(
      async () => {
        await t.services.shadows.splitWriter.flush();
        const { body } = await request(t.app)
          .get(`/api/scenario/${id}/splits/${created.body.splitId}`)
          .set(bearer(alice));
        return body.report.runs >= 400 ? body : undefined;
      },
      20_000,
      100,
    );
    expect(
      split.report.arms.map(
        (arm: { version: string; runs: number; decisions: { value: string; rate: number; high: number }[] }) => [
          arm.version,
          arm.runs,
          arm.decisions.map((d) => [d.value, d.rate, d.high]),
        ],
      ),
    ).toEqual([
      ['2', 400 - 2 * challengers, [['APPROVE', 1, 1]]],
      ['develop', 2 * challengers, [['REVIEW', 1, 1]]],
    ]);
    const promoted = await request(t.app)
      .post(`/api/scenario/${id}/splits/${created.body.splitId}/promote`)
      .set(bearer(alice))
      .send({ version: 'develop' });
    expect(promoted.body).toMatchObject({
      state: 'ENDED',
      promotedVersion: '3',
      endedBy: alice.username,
      endedReason: 'challenger develop was promoted',
    });
    const now = await score({ customerId: 'C-1', ...application });
    expect([now.body.version, now.body.result.decision]).toEqual(['3', 'REVIEW']);
  }, 120_000);
});
