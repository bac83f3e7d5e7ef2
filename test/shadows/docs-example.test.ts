import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { isolateJobStore } from '../execution/support.js';
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
  it('answers as version 1 and gives the report the page shows', async () => {
    const scenarioYaml = block(replayPage, 'replay-example', 'scenario');
    const importYaml = (yaml: string, query: Record<string, string> = {}) =>
      request(t.app).post('/api/scenario/import').query(query).set(bearer(alice)).set('content-type', 'application/yaml').send(yaml);
    expect((await importYaml(scenarioYaml)).body.scenarios[0].outcome).toBe('CREATED');
    const id = await scenarioIdOf(t, alice.id, 'credit-scorecard');
    expect((await request(t.app).post(`/api/scenario/deploy/${id}`).set(bearer(alice))).status).toBe(204);
    const applications = JSON.parse(block(page, 'live-example', 'applications')) as Array<Record<string, unknown>>;
    const score = (body: Record<string, unknown>) => request(t.app).post('/api/scenario/code/remote/score?name=credit-scorecard').set('Score-Token', alice.scoreToken).send(body);
    const before = [];
    for (const body of applications) before.push((await score(body)).body.result);

    const candidate = scenarioYaml.replace('score >= 600', 'score >= 620');
    expect((await importYaml(candidate, { overwrite_develop: 'true' })).body.scenarios[0].outcome).toBe('UPDATED');
    const attached = await request(t.app).post(`/api/scenario/${id}/shadows`).set(bearer(alice)).send(JSON.parse(block(page, 'live-example', 'request')));
    expect(attached.status).toBe(201);

    const after = [];
    for (const body of applications) after.push((await score(body)).body.result);
    expect(after).toEqual(before);
    const shadow = await shadowWithRuns(t, alice, id, attached.body.shadowId, applications.length);
    expect(shadow).toMatchObject(JSON.parse(block(page, 'live-example', 'report')));
  }, 60_000);
});
