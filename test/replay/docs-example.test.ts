import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, replayed, scenarioIdOf } from './support.js';
import { storedRecordCount } from '../records/stored-records.js';

/** The worked example of docs/replay.md, run through the API with the page's blocks as written. */

const page = readFileSync(new URL('../../docs/replay.md', import.meta.url), 'utf8');

/** The fenced block that follows `<!-- replay-example: name -->`. */
function block(name: string): string {
  const match = new RegExp(`<!-- replay-example: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(page);
  if (!match) throw new Error(`docs/replay.md has no replay-example block "${name}"`);
  return match[1];
}

let t: TestApp;
let alice: TestUser;
beforeAll(async () => {
  isolateJobStore('replay-docs');
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
});
afterAll(() => t.close());

describe('docs/replay.md, "A worked example: raising a cut-off"', () => {
  it('gives the report the page shows, and deploys with the replay as its reference', async () => {
    const scenarioYaml = block('scenario');
    const importYaml = (yaml: string, query: Record<string, string> = {}) =>
      request(t.app)
        .post('/api/scenario/import')
        .query(query)
        .set(bearer(alice))
        .set('content-type', 'application/yaml')
        .send(yaml);

    // 1. Import and deploy version 1.
    expect((await importYaml(scenarioYaml)).body.scenarios[0].outcome).toBe('CREATED');
    const id = await scenarioIdOf(t, alice.id, 'credit-scorecard');
    expect((await request(t.app).post(`/api/scenario/deploy/${id}`).set(bearer(alice))).status).toBe(204);

    // 2. The batch of eight applications, recorded.
    const batch = JSON.parse(block('batch')) as { parameters: unknown[] };
    expect(
      (await request(t.app).post('/api/batch/score').set('Score-Token', alice.scoreToken).send(batch)).status,
    ).toBe(202);
    await waitFor(
      async () => {
        await t.services.records.recorder.flush();
        return (await storedRecordCount(t.services.db, id)) === batch.parameters.length ? true : undefined;
      },
      30_000,
      50,
    );

    // 3. The candidate, as the page's sed makes it.
    const candidate = scenarioYaml.replace('score >= 600', 'score >= 620');
    expect(candidate).not.toBe(scenarioYaml);
    expect((await importYaml(candidate, { overwrite_develop: 'true' })).body.scenarios[0].outcome).toBe('UPDATED');

    // 4–5. The replay, and the report shown (the page abridges it: every field it shows must hold).
    const replay = await replayed(t, alice, id, JSON.parse(block('request')));
    expect(replay).toMatchObject(JSON.parse(block('report')));
    expect(replay.report.sample).toHaveLength(2);

    // 6. Deploy with the reference; the version history shows it.
    expect(
      (await request(t.app).post(`/api/scenario/deploy/${id}`).query({ replay: replay.replayId }).set(bearer(alice)))
        .status,
    ).toBe(204);
    const history = await request(t.app).get(`/api/scenario/${id}/version`).set(bearer(alice));
    expect(history.body.find((version: { version: string }) => version.version === '2')).toMatchObject({
      status: 'DEPLOYED',
      replayId: replay.replayId,
    });
  });
});
