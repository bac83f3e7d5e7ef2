import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore } from '../execution/support.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, recordBatch, replayed, scenarioIdOf } from '../replay/support.js';

/** The worked example of docs/models.md, run through the API with the page's blocks and files as written. */

const page = readFileSync(new URL('../../docs/models.md', import.meta.url), 'utf8');
const repository = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url));

/** The fenced block that follows `<!-- models-example: name -->`. */
function block(name: string): string {
  const match = new RegExp(`<!-- models-example: ${name} -->\\n\`\`\`\\w+\\n([\\s\\S]*?)\\n\`\`\``).exec(page);
  if (!match) throw new Error(`docs/models.md has no models-example block "${name}"`);
  return match[1];
}

/** The `-F file=@…` of the page's upload of a version, by its number. */
function uploadedFile(version: number): string {
  const match = new RegExp(`-F file=@(\\S+-v${version}\\.pmml)`).exec(page);
  if (!match) throw new Error(`docs/models.md uploads no version ${version}`);
  return match[1];
}

let t: TestApp;
let alice: TestUser;
beforeAll(async () => {
  isolateJobStore('models-docs');
  t = await createTestApp();
  await t.services.execution.startWorker();
  alice = await t.newUser();
});
afterAll(() => t.close());

describe('docs/models.md, "Worked example"', () => {
  it('uploads, scores with reason codes, replays the retrained version and deploys it', async () => {
    const upload = (version: number) =>
      request(t.app)
        .post('/api/models/credit-scorecard/versions')
        .set(bearer(alice))
        .attach('file', repository(uploadedFile(version)), uploadedFile(version).split('/').at(-1)!);
    const importYaml = (yaml: string, query: Record<string, string> = {}) =>
      request(t.app)
        .post('/api/scenario/import')
        .query(query)
        .set(bearer(alice))
        .set('content-type', 'application/yaml')
        .send(yaml);

    // 1. The trained scorecard, uploaded.
    const first = await upload(1);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject(JSON.parse(block('upload')));

    // 2. The scenario that uses version 1, deployed.
    const scenarioYaml = block('scenario');
    expect((await importYaml(scenarioYaml)).body.scenarios[0].outcome).toBe('CREATED');
    const id = await scenarioIdOf(t, alice.id, 'credit-application');
    expect((await request(t.app).post(`/api/scenario/deploy/${id}`).set(bearer(alice))).status).toBe(204);

    // 3. One application scored.
    const scored = await request(t.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: 'credit-application', key: alice.scoreToken })
      .send(JSON.parse(block('application')));
    expect(scored.body).toMatchObject(JSON.parse(block('answer')));

    // 4. The version in use cannot be deleted.
    const refused = await request(t.app).delete('/api/models/credit-scorecard/versions/1').set(bearer(alice));
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe('MODEL_IN_USE');

    // 5. Production traffic, recorded.
    await recordBatch(t, alice, 'credit-application', JSON.parse(block('batch')).parameters);

    // 6. The retrained version, and a candidate that uses it, as the page's sed makes it.
    expect((await upload(2)).body).toMatchObject({ version: 2 });
    const candidate = scenarioYaml.replace('version: 1', 'version: 2');
    expect(candidate).not.toBe(scenarioYaml);
    expect((await importYaml(candidate, { overwrite_develop: 'true' })).body.scenarios[0].outcome).toBe('UPDATED');

    // 7. The replay, and the report shown (abridged on the page: every field it shows must hold).
    const replay = await replayed(t, alice, id, JSON.parse(block('request')));
    expect(replay).toMatchObject(JSON.parse(block('report')));

    // 8. Deployed with the replay as its evidence; the deployed scenario now scores with version 2.
    expect(
      (await request(t.app).post(`/api/scenario/deploy/${id}`).query({ replay: replay.replayId }).set(bearer(alice)))
        .status,
    ).toBe(204);
    const again = await request(t.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: 'credit-application', key: alice.scoreToken })
      .send(JSON.parse(block('application')));
    expect(again.body).toMatchObject(JSON.parse(block('answer-v2')));
  });
});
