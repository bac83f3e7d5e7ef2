import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * express-openapi-validator compiled (and kept for ever) a request validator per method, path and Content-Type with
 * all its parameters: each new parameter value cost 113–145 ms of the event loop and about 1.6 MB. The request
 * checks are now compiled once per operation when the app is built (src/http/request-check.ts), and judge the
 * media type alone.
 */

describe('requests with ever new Content-Type parameters', () => {
  let testApp: TestApp;
  let user: TestUser;
  beforeAll(async () => {
    testApp = await createTestApp({ configOverrides: { validateResponses: false } });
    user = await testApp.newUser();
  });
  afterAll(async () => testApp.close());

  const importWith = (contentType: string) =>
    request(testApp.app)
      .post('/api/scenario/import')
      .query({ context: user.context() })
      .set('Authorization', `Bearer ${user.accessToken}`)
      .set('Content-Type', contentType)
      .send('{"name":"x"}');

  /** CPU time (ms) of this process while `count` imports are answered, each with the Content-Type `contentTypeOf(i)`. */
  async function cpuOf(
    count: number,
    contentTypeOf: (index: number) => string,
  ): Promise<{ ms: number; statuses: number[] }> {
    const before = process.cpuUsage();
    const statuses: number[] = [];
    for (let index = 0; index < count; index += 1) statuses.push((await importWith(contentTypeOf(index))).status);
    const used = process.cpuUsage(before);
    return { ms: (used.user + used.system) / 1000, statuses };
  }

  it('cost no more than the same request repeated, and are answered the same', async () => {
    await cpuOf(3, () => 'application/json');
    const same = await cpuOf(20, () => 'application/json; x=0');
    const distinct = await cpuOf(20, (index) => `application/json; x=${index + 1}; charset=utf-8`);
    expect(distinct.statuses).toEqual(same.statuses);
    expect(same.statuses[0]).toBe(400);
    // Before: every request compiled a validator (20 × 100 ms or more).
    expect(distinct.ms).toBeLessThan(2 * same.ms + 300);
  }, 60_000);

  it('still name the Content-Type as sent in a 415', async () => {
    const response = await importWith('text/plain; x=1');
    expect(response.status).toBe(415);
    expect(response.body.message).toContain('"text/plain; x=1"');
  });
});
