import request from 'supertest';
import { useTestApp } from '../support/test-app.js';

/**
 * Operations that declare no request body ignore one: no 400 for broken JSON or YAML, no 413 for its size, no 415
 * for its media type, on both lanes.
 */

const t = useTestApp();

const bearer = () => ({ Authorization: `Bearer ${t.user.accessToken}` });

describe('a body sent to an operation that declares none', () => {
  it('is ignored when it is broken JSON (GET listCollections answers 200)', async () => {
    const response = await request(t.app.app)
      .get('/api/internaldata/collections')
      .set(bearer())
      .set('Content-Type', 'application/json')
      .send('{');
    expect(response.status).toBe(200);
    expect(response.body).toEqual([]);
  });

  it('is ignored when it is larger than the body limit (GET openScenario answers 404 for a missing scenario)', async () => {
    const response = await request(t.app.app)
      .get('/api/scenario/open/999999')
      .query({ context: t.user.context() })
      .set(bearer())
      .set('Content-Type', 'application/json')
      .send(`"${'x'.repeat(2 * 1024 * 1024)}"`);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
  });

  it('is ignored when it is broken YAML (POST renameScenario answers 404 for a missing scenario)', async () => {
    const response = await request(t.app.app)
      .post('/api/scenario/rename/missing/other')
      .query({ context: t.user.context() })
      .set(bearer())
      .set('Content-Type', 'application/yaml')
      .send('a: [');
    expect(response.status).toBe(404);
  });

  it('is still read by operations that declare one (broken JSON to import is 400 MALFORMED_BODY)', async () => {
    const response = await request(t.app.app)
      .post('/api/scenario/import')
      .query({ context: t.user.context() })
      .set(bearer())
      .set('Content-Type', 'application/json')
      .send('{');
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('MALFORMED_BODY');
  });
});

describe('listCollections', () => {
  it('answers 400, which it declares, for an unknown query parameter', async () => {
    const response = await request(t.app.app).get('/api/internaldata/collections').query({ foo: 'bar' }).set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: 'query.foo' })]);
  });
});

/**
 * The async result declares no request body: a body sent with it is ignored on both lanes, whatever its
 * media type or size (found by `npm run fuzz`: the fast lane answered an undeclared 415/413 as a 500).
 */
describe.each([
  ['the fast lane', true],
  ['Express', false],
])('getAsyncScoreResult with a body on %s', (_lane, fastLane) => {
  const lane = useTestApp({ configOverrides: { scoreFastLane: fastLane } });

  const resultWithBody = (contentType: string, body: string) =>
    request(lane.app.app)
      .get('/api/scenario/code/scoreasyncresult/nothing-here')
      .set('Score-Token', lane.user.scoreToken)
      .set('X-SCE-RequestId', 'no-such-run')
      .set('Content-Type', contentType)
      .send(body);

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
