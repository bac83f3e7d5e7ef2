import type { Server } from 'node:http';
import { routes, type OperationId, type RouteDefinition } from '../../generated/routes.js';
import type { OperationHandlers } from '../../src/http/operation-handler.js';
import type { AuthenticatedUser } from '../../src/auth/authenticated-user.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { closeServer, listenOnFreePort, sendRaw } from '../support/raw-http.js';
import { sampleUrl } from '../support/sample-requests.js';

/**
 * One case rule for every router of the service (docs/architecture.md, "Route matching"): paths
 * match case-sensitively and exactly as written in the spec, with at most one trailing slash; a
 * percent-encoded character never stands for a literal one of the path, and `.`/`..` segments and
 * empty segments are not collapsed. Every variant below is either routed to its operation, and then
 * authenticated (401 without a credential), or not routed at all (404, or 405 when the path is
 * another operation's, whatever the credential).
 * No handler ever runs without an authenticated user.
 */

interface Variant {
  label: string;
  path: string;
  /** Whether routing sends the request to the route's handler. */
  routed: boolean;
}

/** The same path with the static segment at `index` (counting after the leading slash) changed by `change`. */
function changeSegment(path: string, index: number, change: (segment: string) => string): string {
  const segments = path.split('/');
  segments[index + 1] = change(segments[index + 1]);
  return segments.join('/');
}

function staticSegmentIndexes(route: RouteDefinition): number[] {
  return route.path
    .split('/')
    .slice(1)
    .flatMap((segment, index) => (segment.startsWith('{') ? [] : [index]));
}

function paramSegmentIndexes(route: RouteDefinition): number[] {
  return route.path
    .split('/')
    .slice(1)
    .flatMap((segment, index) => (segment.startsWith('{') ? [index] : []));
}

function variantsOf(route: RouteDefinition): Variant[] {
  const url = sampleUrl(route);
  const statics = staticSegmentIndexes(route);
  const last = statics[statics.length - 1];
  const variants: Variant[] = [
    { label: 'as written in the spec', path: url, routed: true },
    { label: 'with a trailing slash', path: `${url}/`, routed: true },
    { label: 'all upper case', path: url.toUpperCase(), routed: false },
    { label: 'with /API for /api', path: url.replace(/^\/api/, '/API'), routed: false },
    {
      label: 'with its last static segment in upper case',
      path: changeSegment(url, last, (segment) => segment.toUpperCase()),
      routed: false,
    },
    {
      label: 'with its last static segment capitalised',
      path: changeSegment(url, last, (segment) => segment[0].toUpperCase() + segment.slice(1)),
      routed: false,
    },
    { label: 'with two trailing slashes', path: `${url}//`, routed: false },
    { label: 'with a double slash inside', path: url.replace(/^\/api\//, '/api//'), routed: false },
    { label: 'with a leading double slash', path: `/${url}`, routed: false },
    { label: 'with an encoded slash for a slash', path: url.replace(/^\/api\//, '/api%2F'), routed: false },
    {
      label: 'with an encoded letter in a static segment',
      path: changeSegment(url, last, (segment) => `%${segment.charCodeAt(0).toString(16)}${segment.slice(1)}`),
      routed: false,
    },
    {
      label: 'with an upper-case encoded letter in a static segment',
      path: changeSegment(
        url,
        last,
        (segment) => `%${segment.charCodeAt(0).toString(16).toUpperCase()}${segment.slice(1)}`,
      ),
      routed: false,
    },
    {
      label: 'with a dot-dot segment that would lead back to it',
      path: url.replace(/^\/api\//, '/api/x/../'),
      routed: false,
    },
    { label: 'with a dot segment', path: url.replace(/^\/api\//, '/api/./'), routed: false },
  ];
  const params = paramSegmentIndexes(route);
  if (params.length > 0) {
    variants.push(
      {
        label: 'with an encoded slash inside a path parameter',
        path: changeSegment(url, params[0], (segment) => `${segment}%2Fx`),
        routed: true,
      },
      {
        label: 'with a path parameter in upper case',
        path: changeSegment(url, params[0], (segment) => segment.toUpperCase()),
        routed: true,
      },
      { label: 'with `..` as a path parameter', path: changeSegment(url, params[0], () => '..'), routed: true },
    );
  }
  return variants;
}

const NOT_ROUTED = [
  [404, 'ROUTE_NOT_FOUND'],
  [405, 'METHOD_NOT_ALLOWED'],
];

interface JsonResponse {
  status: number;
  body: { code?: string; status?: number } | undefined;
}

/** Sends the path exactly as given, a JSON body `{}` with the methods that take one, and parses the answer. */
async function send(
  server: Server,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const body = method === 'GET' || method === 'HEAD' || method === 'DELETE' ? undefined : '{}';
  const response = await sendRaw(server, method, path, { 'Content-Type': 'application/json', ...headers }, body);
  return {
    status: response.status,
    body: response.text ? (JSON.parse(response.text) as JsonResponse['body']) : undefined,
  };
}

describe.each([
  ['on', true],
  ['off', false],
])('route matching with the score fast lane %s', (_state, fastLane) => {
  let testApp: TestApp;
  let server: Server;
  let user: TestUser;
  /** Every handler call: which operation, and the user it saw. */
  const calls: Array<{ operationId: string; user: unknown }> = [];

  beforeAll(async () => {
    // Every handler is replaced by a recorder: the test sees exactly which requests reach a handler.
    const recorder =
      (operationId: OperationId) =>
      async (request: { user: AuthenticatedUser }): Promise<never> => {
        calls.push({ operationId, user: request.user });
        throw new Error(`recorded ${operationId}`);
      };
    const handlers: OperationHandlers = Object.fromEntries(
      routes.map((route) => [route.operationId, recorder(route.operationId)]),
    ) as Record<OperationId, ReturnType<typeof recorder>>;
    testApp = await createTestApp({
      configOverrides: { scoreFastLane: fastLane },
      handlers,
      fastLane: fastLane
        ? Object.fromEntries(
            (['scoreScenario', 'scoreAsync', 'getAsyncScoreResult'] as const).map((operationId) => [
              operationId,
              recorder(operationId),
            ]),
          )
        : undefined,
    });
    user = await testApp.newUser();
    server = await listenOnFreePort(testApp.app);
  });
  afterAll(async () => {
    await closeServer(server);
    await testApp.close();
  });

  function credentials(route: RouteDefinition): Record<string, string> {
    return route.security.includes('bearerAuth')
      ? { Authorization: `Bearer ${user.accessToken}` }
      : { 'Score-Token': user.scoreToken };
  }

  const cases = routes.flatMap((route) =>
    variantsOf(route).map(
      (variant) => [route.operationId, route.method.toUpperCase(), variant.label, route, variant] as const,
    ),
  );

  it.each(cases)(
    '%s (%s) %s: authenticated when routed, 404 when not, and no handler runs without a credential',
    async (_id, method, _label, route, variant) => {
      calls.length = 0;
      const anonymous = await send(server, method, variant.path);
      expect(calls).toEqual([]);
      if (variant.routed) {
        expect(anonymous.status).toBe(401);
        expect(anonymous.body?.code).toBe('UNAUTHENTICATED');
      } else {
        // 405 when the path is another operation's (e.g. POST /api/batch/%73core is GET /api/batch/{batchTaskId}).
        expect(NOT_ROUTED).toContainEqual([anonymous.status, anonymous.body?.code]);
        const withCredential = await send(server, method, variant.path, credentials(route));
        expect(NOT_ROUTED).toContainEqual([withCredential.status, withCredential.body?.code]);
        expect(calls).toEqual([]);
      }
    },
  );

  it.each(routes.filter((route) => route.method === 'get').map((route) => [route.operationId, route] as const))(
    '%s: HEAD is routed like GET and authenticated',
    async (_id, route) => {
      calls.length = 0;
      expect((await send(server, 'HEAD', sampleUrl(route))).status).toBe(401);
      expect((await send(server, 'HEAD', sampleUrl(route).toUpperCase())).status).toBe(404);
      expect(calls).toEqual([]);
    },
  );

  it('reaches the handler, with the authenticated user, when the path is as written and the credential valid', async () => {
    calls.length = 0;
    const route = routes.find((candidate) => candidate.operationId === 'listCollections') as RouteDefinition;
    await send(server, 'GET', `${route.path}/`, credentials(route));
    expect(calls).toEqual([
      { operationId: 'listCollections', user: expect.objectContaining({ id: user.id, username: user.username }) },
    ]);
  });

  it.each([
    ['GET', '/api/INTERNALDATA/collections/customers'],
    ['GET', `/API/scenario/open/1?context=${encodeURIComponent('{"requester":{"username":"x"}}')}`],
    ['POST', '/API/batch/score?key=nope'],
    ['POST', '/API/scenario/code/remote/score?name=x&key=nope'],
  ])('answers 404 to %s %s, the case variants reported in issue 9', async (method, path) => {
    calls.length = 0;
    const response = await send(server, method, path);
    expect(response.status).toBe(404);
    expect(calls).toEqual([]);
  });
});
