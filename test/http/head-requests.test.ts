import type { IncomingHttpHeaders, Server } from 'node:http';
import { routes, type RouteDefinition } from '../../generated/routes.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { closeServer, listenOnFreePort, sendRaw as send } from '../support/raw-http.js';
import { sampleUrl } from '../support/sample-requests.js';

/** The headers a HEAD must answer as its GET does (RFC 9110 §9.3.2); the request id and date differ by nature. */
function comparable(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { 'x-request-id': _id, date: _date, ...rest } = headers;
  return rest;
}

/**
 * HEAD on every GET operation answers what the GET answers, without the body: the real handlers,
 * through the validator that knows only GET (it used to answer 405 METHOD_NOT_ALLOWED).
 */
describe.each([
  ['on', true],
  ['off', false],
])('HEAD requests, score fast lane %s', (_state, fastLane) => {
  let testApp: TestApp;
  let server: Server;
  let user: TestUser;

  beforeAll(async () => {
    testApp = await createTestApp({ configOverrides: { scoreFastLane: fastLane } });
    user = await testApp.newUser();
    server = await listenOnFreePort(testApp.app);
  });
  afterAll(async () => {
    await closeServer(server);
    await testApp.close();
  });

  const credentials = (route: RouteDefinition): Record<string, string> =>
    route.security.includes('bearerAuth')
      ? { Authorization: `Bearer ${user.accessToken}` }
      : { 'Score-Token': user.scoreToken, 'X-SCE-RequestId': 'no-such-request' };

  it.each(routes.filter((route) => route.method === 'get').map((route) => [route.operationId, route] as const))(
    '%s: HEAD answers as GET does, without a body',
    async (_id, route) => {
      const get = await send(server, 'GET', sampleUrl(route), credentials(route));
      const head = await send(server, 'HEAD', sampleUrl(route), credentials(route));
      expect(head.status).not.toBe(405);
      expect(head.status).toBe(get.status);
      expect(comparable(head.headers)).toEqual(comparable(get.headers));
      expect(head.text).toBe('');
    },
  );

  it("answers 200 with the GET's length and type, and no body, for a list", async () => {
    const head = await send(server, 'HEAD', '/api/internaldata/collections', {
      Authorization: `Bearer ${user.accessToken}`,
    });
    expect(head.status).toBe(200);
    expect(head.headers['content-type']).toMatch(/^application\/json/);
    expect(Number(head.headers['content-length'])).toBeGreaterThan(0);
    expect(head.text).toBe('');
  });

  it('answers a HEAD the validator refuses as the GET is refused (400), without a body', async () => {
    const head = await send(server, 'HEAD', '/api/internaldata/collections?colour=blue', {
      Authorization: `Bearer ${user.accessToken}`,
    });
    expect(head.status).toBe(400);
    expect(head.text).toBe('');
  });

  it('still answers 401 to a HEAD without a credential, and 405 to a HEAD of a path that has no GET', async () => {
    expect((await send(server, 'HEAD', '/api/internaldata/collections', {})).status).toBe(401);
    const postOnly = await send(server, 'HEAD', '/api/scenario/import', {
      Authorization: `Bearer ${user.accessToken}`,
    });
    expect(postOnly.status).toBe(405);
  });
});
