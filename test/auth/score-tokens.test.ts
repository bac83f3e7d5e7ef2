import { createHash } from 'node:crypto';
import request from 'supertest';
import { waitFor } from '../execution/support.js';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** Score tokens: stored only as a hash, shown once, rotated, and a disabled user's refused within a bounded time. */

const CACHE_SECONDS = 1;
let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp({ configOverrides: { scoreTokenCacheSeconds: CACHE_SECONDS } });
});
afterAll(async () => testApp.close());

/** 401 when the token is refused; otherwise the scenario lookup answers (404: the user has no such scenario). */
const scoreStatus = async (token: string) =>
  (
    await request(testApp.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: 'nothing-here', key: token })
      .send({})
  ).status;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('score tokens at rest', () => {
  it('stores only the SHA-256 of a score token, never the token', async () => {
    const user = await testApp.newUser();
    const row = (await testApp.services.db('users').where({ id: user.id }).first()) as Record<string, unknown>;
    expect(Object.keys(row)).not.toContain('score_token');
    expect(
      JSON.stringify(Object.values(row).map((value) => (Buffer.isBuffer(value) ? value.toString('latin1') : value))),
    ).not.toContain(user.scoreToken);
    expect(row.score_token_hash).toEqual(createHash('sha256').update(user.scoreToken).digest());
    expect(await scoreStatus(user.scoreToken)).toBe(404);
  });

  it('issues a score token once: asking again without rotating gives none', async () => {
    const user = await testApp.newUser();
    expect(await testApp.services.users.issueScoreToken(user.id)).toBeUndefined();
    expect(await scoreStatus(user.scoreToken)).toBe(404);
  });
});

describe('rotating a score token', () => {
  it('gives a new token that works and refuses the old one at once', async () => {
    const user = await testApp.newUser();
    expect(await scoreStatus(user.scoreToken)).toBe(404);
    const rotated = await testApp.services.users.issueScoreToken(user.id, { rotate: true });
    expect(rotated).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated).not.toBe(user.scoreToken);
    expect(await scoreStatus(user.scoreToken)).toBe(401);
    expect(await scoreStatus(rotated as string)).toBe(404);
  });
});

describe('disabling a user', () => {
  it('refuses its score token at once when disabled through this process', async () => {
    const user = await testApp.newUser();
    expect(await scoreStatus(user.scoreToken)).toBe(404);
    await testApp.services.users.setEnabled(user.id, false);
    expect(await scoreStatus(user.scoreToken)).toBe(401);
    await testApp.services.users.setEnabled(user.id, true);
    expect(await scoreStatus(user.scoreToken)).toBe(404);
  });

  it('refuses its score token within SCORE_TOKEN_CACHE_SECONDS and one re-read when disabled elsewhere (another process, or SQL)', async () => {
    const user = await testApp.newUser();
    expect(await scoreStatus(user.scoreToken)).toBe(404);
    await testApp.services.db('users').where({ id: user.id }).update({ enabled: false });
    expect(await scoreStatus(user.scoreToken)).toBe(404);
    await sleep(CACHE_SECONDS * 1000 + 200);
    // Stale-while-revalidate: the first request past the cache time is answered from the look-up in hand and
    // has it read again in the background; from the re-read on, the token is refused.
    await scoreStatus(user.scoreToken);
    await waitFor(async () => ((await scoreStatus(user.scoreToken)) === 401 ? true : undefined), 1000);
  });

  it('refuses its access token at once', async () => {
    const user: TestUser = await testApp.newUser();
    const list = () =>
      request(testApp.app).get('/api/internaldata/collections').set('Authorization', `Bearer ${user.accessToken}`);
    expect((await list()).status).toBe(200);
    await testApp.services.db('users').where({ id: user.id }).update({ enabled: false });
    expect((await list()).status).toBe(401);
  });
});

describe('the score-token cache bound', () => {
  it('is 5 seconds unless SCORE_TOKEN_CACHE_SECONDS says otherwise', () => {
    expect(loadConfig({ APP_ENV: 'local' }).scoreTokenCacheSeconds).toBe(5);
    expect(loadConfig({ APP_ENV: 'local', SCORE_TOKEN_CACHE_SECONDS: '0' }).scoreTokenCacheSeconds).toBe(0);
  });

  it('with 0, a user disabled elsewhere is refused on the next request', async () => {
    const uncached = await createTestApp({ configOverrides: { scoreTokenCacheSeconds: 0 } });
    try {
      const user = await uncached.newUser();
      const status = async () =>
        (
          await request(uncached.app)
            .post('/api/scenario/code/remote/score')
            .query({ name: 'nothing-here', key: user.scoreToken })
            .send({})
        ).status;
      expect(await status()).toBe(404);
      await uncached.services.db('users').where({ id: user.id }).update({ enabled: false });
      expect(await status()).toBe(401);
    } finally {
      await uncached.close();
    }
  });
});
