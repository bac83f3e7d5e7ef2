import request from 'supertest';
import { resolveOwner } from '../../src/auth/access-context.js';
import { simpleScenario } from '../scenarios/support/fixtures.js';
import { outsideTheContract } from '../support/outside-the-contract.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

let testApp: TestApp;
let user: TestUser;
let other: TestUser;
let admin: TestUser;

/** Stands in for deployScenario: resolves the owner from `context` and answers 204 naming it in X-Owner. */
function ownerProbe(app: () => TestApp): never {
  return outsideTheContract(async (request) => {
    const owner = await resolveOwner(
      request.user,
      request.query.context as Parameters<typeof resolveOwner>[1],
      app().services.users,
    );
    return { status: 204, headers: { 'X-Owner': owner.username } };
  });
}

beforeAll(async () => {
  testApp = await createTestApp({ handlers: { deployScenario: ownerProbe(() => testApp) } });
  [user, other, admin] = await Promise.all([testApp.newUser(), testApp.newUser(), testApp.newUser({ admin: true })]);
});
afterAll(async () => testApp.close());

/** Calls the probe as `caller` with a raw query string (written exactly as a client would send it). */
const probe = (caller: TestUser, query = '') =>
  request(testApp.app)
    .post(`/api/scenario/deploy/1${query ? `?${query}` : ''}`)
    .set('Authorization', `Bearer ${caller.accessToken}`);
const json = (context: unknown) => `context=${encodeURIComponent(JSON.stringify(context))}`;
const field = (path: string, value: string | number) =>
  `${encodeURIComponent(`context${path}`)}=${encodeURIComponent(String(value))}`;

describe('context: the token user acting on their own scenarios', () => {
  it.each([
    ['{} as JSON', () => json({})],
    ['no context at all (how openapi-fetch and Swagger UI send {})', () => ''],
    ['an empty value, context=', () => 'context='],
    ['actors.requester by username (JSON)', () => json({ actors: { requester: { username: user.username } } })],
    ['actors.requester by id (JSON)', () => json({ actors: { requester: { id: String(user.id) } } })],
    [
      'actors.requester by id and username, other User fields ignored (JSON)',
      () =>
        json({
          actors: {
            requester: {
              id: String(user.id),
              username: user.username,
              email: 'a@example.com',
              enabled: true,
              roles: [{ name: 'user', authority: 'ROLE_USER' }],
            },
          },
        }),
    ],
    [
      'actors.resourceOwner and resourceOwnerOrRequester naming the requester (JSON)',
      () =>
        json({
          actors: { requester: { username: user.username }, resourceOwner: { username: user.username } },
          resourceOwnerOrRequester: { id: String(user.id) },
        }),
    ],
    ['deepObject fields', () => field('[actors][requester][username]', user.username)],
    [
      'several deepObject fields under one object',
      () =>
        [
          field('[actors][requester][id]', user.id),
          field('[actors][requester][username]', user.username),
          field('[actors][resourceOwner][username]', user.username),
        ].join('&'),
    ],
    [
      'deepObject fields of other types (boolean, int32, arrays of objects)',
      () =>
        [
          field('[actors][requester][username]', user.username),
          field('[actors][requester][enabled]', 'true'),
          field('[actors][requester][attempts]', 2),
          field('[actors][requester][roles][0][name]', 'user'),
        ].join('&'),
    ],
    ['deepObject with unencoded brackets', () => `context[actors][requester][username]=${user.username}`],
    [
      'a deepObject field holding JSON (as Swagger UI sends nested objects)',
      () => field('[actors]', JSON.stringify({ requester: { username: user.username } })),
    ],
    ['the pre-1.9 shape {requester} (JSON)', () => json({ requester: { username: user.username } })],
    [
      'the pre-1.9 shape with a numeric userId and an owner naming the requester',
      () => json({ requester: { userId: user.id }, owner: { username: user.username } }),
    ],
    [
      'context=[object Object] (swagger-typescript-api writes an object with String())',
      () => 'context=%5Bobject%20Object%5D',
    ],
    ['the same, unencoded', () => 'context=[object Object]'],
    ["a deepObject field of [object Object] (orval's fetch client)", () => field('[actors]', '[object Object]')],
  ])('accepts %s', async (_shape, query) => {
    const response = await probe(user, query());
    expect(response.status).toBe(204);
    expect(response.headers['x-owner']).toBe(user.username);
  });
});

describe('context: the requester must be the token user', () => {
  it.each([
    [
      'another username (JSON)',
      () => json({ actors: { requester: { username: other.username } } }),
      'query.context.actors.requester',
    ],
    ['another id (deepObject)', () => field('[actors][requester][id]', other.id), 'query.context.actors.requester'],
    ['an id that is not one of ours', () => field('[actors][requester][id]', 'abc'), 'query.context.actors.requester'],
    [
      'the right id with another username',
      () => json({ actors: { requester: { id: String(user.id), username: other.username } } }),
      'query.context.actors.requester',
    ],
    [
      'another user in the pre-1.9 shape',
      () => json({ requester: { username: other.username } }),
      'query.context.requester',
    ],
  ])('answers 403 CONTEXT_MISMATCH for %s', async (_case, query, path) => {
    const response = await probe(user, query());
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('CONTEXT_MISMATCH');
    expect(response.body.details[0].path).toBe(path);
  });

  it('answers 403 CONTEXT_MISMATCH to an admin too', async () => {
    const response = await probe(
      admin,
      json({ actors: { requester: { username: user.username }, resourceOwner: { username: user.username } } }),
    );
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('CONTEXT_MISMATCH');
  });
});

describe('context: another resource owner', () => {
  it.each([
    [
      'actors.resourceOwner',
      () => json({ actors: { resourceOwner: { username: other.username } } }),
      'query.context.actors.resourceOwner',
    ],
    [
      'resourceOwnerOrRequester',
      () => field('[resourceOwnerOrRequester][id]', other.id),
      'query.context.resourceOwnerOrRequester',
    ],
    [
      'the pre-1.9 owner',
      () => json({ requester: { username: user.username }, owner: { username: other.username } }),
      'query.context.owner',
    ],
  ])('answers 403 FORBIDDEN when a non-admin names another owner in %s', async (_where, query, path) => {
    const response = await probe(user, query());
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
    expect(response.body.details[0].path).toBe(path);
  });

  it.each([
    [
      'actors.resourceOwner by username (JSON)',
      () => json({ actors: { requester: { username: admin.username }, resourceOwner: { username: user.username } } }),
    ],
    [
      'actors.resourceOwner by id (deepObject)',
      () =>
        [field('[actors][requester][username]', admin.username), field('[actors][resourceOwner][id]', user.id)].join(
          '&',
        ),
    ],
    ['resourceOwnerOrRequester alone', () => json({ resourceOwnerOrRequester: { username: user.username } })],
    [
      'actors.resourceOwner and resourceOwnerOrRequester agreeing',
      () =>
        json({
          actors: { resourceOwner: { username: user.username } },
          resourceOwnerOrRequester: { id: String(user.id) },
        }),
    ],
    ['the pre-1.9 owner', () => json({ requester: { username: admin.username }, owner: { username: user.username } })],
  ])('lets an admin act for another owner named in %s', async (_where, query) => {
    const response = await probe(admin, query());
    expect(response.status).toBe(204);
    expect(response.headers['x-owner']).toBe(user.username);
  });

  it("takes an admin's rights from a token issued before the user was demoted, and leaves the user demoted", async () => {
    const former = await testApp.newUser({ admin: true });
    const asOwner = json({ actors: { resourceOwner: { username: user.username } } });
    expect((await probe(former, asOwner)).status).toBe(204);
    // What `npm run token -- <user>` (without --admin) does.
    await testApp.services.users.ensureUser(former.username, false);
    const response = await probe(former, asOwner);
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
    expect((await testApp.services.users.findByUsername(former.username))?.isAdmin).toBe(false);
  });

  it('answers 404 when an admin names an owner who does not exist (by username, by id, or by an id that is not ours)', async () => {
    for (const query of [
      json({ actors: { resourceOwner: { username: 'nobody-at-all' } } }),
      field('[actors][resourceOwner][id]', 2_000_000_000),
      field('[actors][resourceOwner][id]', 'abc'),
    ]) {
      const response = await probe(admin, query);
      expect([response.status, response.body.details?.[0]?.path]).toEqual([404, 'query.context.actors.resourceOwner']);
    }
  });

  it.each([
    ['importScenarios', '/api/scenario/import', 'application/json', JSON.stringify(simpleScenario('for-nobody'))],
    [
      'createInputVariablesFromCsv',
      '/api/scenario/data/inputvariables/create',
      'multipart/form-data; boundary=b',
      '--b\r\nContent-Disposition: form-data; name="file"; filename="v.csv"\r\n\r\ntrue;a;INTEGER\r\n--b--\r\n',
    ],
  ])(
    'answers %s with 404, which it declares, when an admin names an owner who does not exist',
    async (_operationId, path, type, body) => {
      const response = await request(testApp.app)
        .post(`${path}?${json({ actors: { resourceOwner: { username: 'nobody-at-all' } } })}`)
        .set('Authorization', `Bearer ${admin.accessToken}`)
        .set('Content-Type', type)
        .send(body);
      expect([response.status, response.body.details?.[0]?.path]).toEqual([404, 'query.context.actors.resourceOwner']);
    },
  );

  it('answers 400 when the context names two different owners', async () => {
    const response = await probe(
      admin,
      json({
        actors: { resourceOwner: { username: user.username } },
        resourceOwnerOrRequester: { username: other.username },
      }),
    );
    expect(response.status).toBe(400);
    expect(response.body.details.map((detail: { path: string }) => detail.path)).toEqual([
      'query.context.actors.resourceOwner',
      'query.context.resourceOwnerOrRequester',
    ]);
    const selfAndOther = await probe(
      admin,
      json({
        actors: { resourceOwner: { username: user.username } },
        resourceOwnerOrRequester: { username: admin.username },
      }),
    );
    expect(selfAndOther.status).toBe(400);
  });
});

describe('context: malformed', () => {
  it.each([
    ['JSON that does not parse', () => 'context=%7B%22actors%22'],
    ['JSON of an array', () => json([])],
    ['a field the interface does not have', () => json({ actor: { username: 'x' } })],
    ['a requester that is not an object', () => json({ actors: { requester: 'me' } })],
    ['a user named by neither id nor username', () => json({ actors: { requester: { email: 'me@example.com' } } })],
    ['an empty pre-1.9 requester', () => json({ requester: {} })],
    ['JSON and deepObject fields at once', () => `${json({})}&${field('[actors][requester][username]', 'x')}`],
  ])('answers 400 for %s', async (_case, query) => {
    const response = await probe(user, query());
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('VALIDATION_FAILED');
    expect(response.body.message).toMatch(/context/);
  });
});

describe('context: [object Object] from an admin', () => {
  it.each([
    ['as the value', 'context=%5Bobject%20Object%5D', 'query.context'],
    [
      'as a deepObject field',
      `${encodeURIComponent('context[actors]')}=${encodeURIComponent('[object Object]')}`,
      'query.context.actors',
    ],
  ])('is 400 %s: whom it names is lost', async (_where, query, path) => {
    const response = await probe(admin, query);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path }] });
    expect(response.body.message).toContain('String()');
  });
});
