import request from 'supertest';
import { contextFor, createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, createScenario, simpleScenario } from './support/fixtures.js';

let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp();
});
afterAll(async () => testApp.close());

const list = (user: TestUser, query: Record<string, unknown> = {}) =>
  request(testApp.app).get('/api/scenario').query(query).set(bearer(user));

describe('listScenarios', () => {
  it("lists the caller's scenarios newest first, with their latest deployed version", async () => {
    const user = await testApp.newUser();
    const other = await testApp.newUser();
    const first = await createScenario(testApp, user, simpleScenario('first'));
    const second = await createScenario(testApp, user, simpleScenario('second'));
    await createScenario(testApp, other, simpleScenario('first'));
    await request(testApp.app).post(`/api/scenario/deploy/${first}`).set(bearer(user)).expect(204);

    const response = await list(user);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      scenarios: [
        {
          id: second,
          name: 'second',
          owner: user.username,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          deployedVersion: null,
        },
        {
          id: first,
          name: 'first',
          owner: user.username,
          createdAt: expect.any(String),
          updatedAt: expect.any(String),
          deployedVersion: '1',
        },
      ],
      nextCursor: null,
    });
  });

  it('reads no context as {} and takes the context of the other scenario operations', async () => {
    const user = await testApp.newUser();
    const id = await createScenario(testApp, user, simpleScenario('s'));
    for (const query of [
      {},
      { context: '{}' },
      { context: user.context() },
      { 'context[actors][requester][username]': user.username },
    ]) {
      const response = await list(user, query);
      expect([query, response.status, response.body.scenarios?.map((s: { id: string }) => s.id)]).toEqual([
        query,
        200,
        [id],
      ]);
    }
  });

  it('answers an empty page to a user without scenarios', async () => {
    const user = await testApp.newUser();
    expect((await list(user)).body).toEqual({ scenarios: [], nextCursor: null });
  });

  it('pages with limit and nextCursor until the last page, which has no cursor', async () => {
    const user = await testApp.newUser();
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) ids.push(await createScenario(testApp, user, simpleScenario(name)));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const response = await list(user, { limit: 2, ...(cursor ? { cursor } : {}) });
      expect(response.status).toBe(200);
      expect(response.body.scenarios.length).toBeLessThanOrEqual(2);
      seen.push(...response.body.scenarios.map((s: { id: string }) => s.id));
      cursor = response.body.nextCursor ?? undefined;
      pages += 1;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...ids].reverse());
  });

  it("lets an admin list another owner's scenarios by naming them in the context", async () => {
    const owner = await testApp.newUser();
    const admin = await testApp.newUser({ admin: true });
    const id = await createScenario(testApp, owner, simpleScenario('s'));
    const response = await list(admin, { context: admin.context(owner.username) });
    expect(response.status).toBe(200);
    expect(response.body.scenarios.map((s: { id: string; owner: string }) => [s.id, s.owner])).toEqual([
      [id, owner.username],
    ]);
  });

  it('answers 401 without a token', async () => {
    expect((await request(testApp.app).get('/api/scenario')).status).toBe(401);
  });

  it('answers 400 naming query.cursor for a cursor it did not issue, and naming query.limit out of range', async () => {
    const user = await testApp.newUser();
    for (const cursor of [
      'abc',
      Buffer.from('s1:0').toString('base64url'),
      Buffer.from('p1:1').toString('base64url'),
    ]) {
      const response = await list(user, { cursor });
      expect([cursor, response.status, response.body.details?.[0]?.path]).toEqual([cursor, 400, 'query.cursor']);
    }
    for (const limit of [0, 101]) {
      const response = await list(user, { limit });
      expect([limit, response.status, response.body.details?.[0]?.path]).toEqual([limit, 400, 'query.limit']);
    }
  });

  it("answers 403 CONTEXT_MISMATCH when the requester is not the token's user, and 403 FORBIDDEN when a user names another owner", async () => {
    const user = await testApp.newUser();
    const stranger = await testApp.newUser();
    const mismatch = await list(user, { context: contextFor(stranger.username) });
    expect([mismatch.status, mismatch.body.code]).toEqual([403, 'CONTEXT_MISMATCH']);
    const forbidden = await list(user, { context: user.context(stranger.username) });
    expect([forbidden.status, forbidden.body.code]).toEqual([403, 'FORBIDDEN']);
  });

  it('answers 404 when an admin names an unknown owner', async () => {
    const admin = await testApp.newUser({ admin: true });
    const response = await list(admin, { context: admin.context('nobody-of-that-name') });
    expect(response.status).toBe(404);
  });
});
