import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * The async result declares no request body: a body sent with it is ignored on both lanes, whatever its
 * media type or size (found by `npm run fuzz`: the fast lane answered an undeclared 415/413 as a 500).
 */
describe.each([['the fast lane', true], ['Express', false]])('getAsyncScoreResult with a body on %s', (_lane, fastLane) => {
  let testApp: TestApp;
  let user: TestUser;

  beforeAll(async () => {
    testApp = await createTestApp({ configOverrides: { scoreFastLane: fastLane } });
    user = await testApp.newUser();
  });
  afterAll(async () => testApp.close());

  const resultWithBody = (contentType: string, body: string) => request(testApp.app)
    .get('/api/scenario/code/scoreasyncresult/nothing-here')
    .set('Score-Token', user.scoreToken).set('X-SCE-RequestId', 'no-such-run')
    .set('Content-Type', contentType).send(body);

  it('ignores a text/plain body', async () => {
    const response = await resultWithBody('text/plain', 'hello');
    expect(response.status).toBe(404);
  });

  it('ignores a YAML body that does not parse', async () => {
    const response = await resultWithBody('application/yaml', 'a: [');
    expect(response.status).toBe(404);
  });

  it('ignores a JSON body larger than the body limit', async () => {
    const response = await resultWithBody('application/json', JSON.stringify('x'.repeat(2_000_000)));
    expect(response.status).toBe(404);
  });
});
