import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import request from 'supertest';
import { createTestApp, type TestApp } from '../support/test-app.js';

/** `npm run token`: shows a score token once, at creation; `--rotate` replaces it; `--disable`/`--enable` switch a user. */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
let testApp: TestApp;

beforeAll(async () => {
  testApp = await createTestApp({ configOverrides: { scoreTokenCacheSeconds: 0 } });
});
afterAll(async () => testApp.close());

async function token(...args: string[]): Promise<{ output: Record<string, unknown>; stderr: string }> {
  const { stdout, stderr } = await run(`${ROOT}node_modules/.bin/tsx`, ['scripts/token.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  return { output: JSON.parse(stdout) as Record<string, unknown>, stderr };
}

const scoreStatus = async (key: unknown) =>
  (
    await request(testApp.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: 'nothing-here', key: String(key) })
      .send({})
  ).status;

describe('npm run token', () => {
  it('prints nothing on stdout when the database is missing, and one line on stderr naming DATABASE_URL', async () => {
    const missing = new URL(process.env.DATABASE_URL as string);
    missing.pathname = `/no_such_database_${randomUUID().slice(0, 8).replace(/-/g, '')}`;
    const failure = await run(`${ROOT}node_modules/.bin/tsx`, ['scripts/token.ts', 'alice'], {
      cwd: ROOT,
      env: { ...process.env, NODE_OPTIONS: '', DATABASE_URL: missing.toString() },
    }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 1, stdout: '' });
    expect(failure!.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^token: Unknown database 'no_such_database_\w+' \(DATABASE_URL mysql:\/\/.*make migrate.*\)$/,
      ),
    ]);
  });

  it('prints the score token when it creates it, never again, and a new one with --rotate that retires the old', async () => {
    const username = `tok-${randomUUID().slice(0, 8)}`;
    const first = await token(username);
    expect(first.output).toMatchObject({
      username,
      accessToken: expect.any(String),
      scoreToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    expect(await scoreStatus(first.output.scoreToken)).toBe(404);

    const second = await token(username);
    expect(second.output).not.toHaveProperty('scoreToken');
    expect(second.output.accessToken).toEqual(expect.any(String));
    expect(second.stderr).toMatch(/already has a score token.*--rotate/);

    const rotated = await token(username, '--rotate');
    expect(rotated.output.scoreToken).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rotated.output.scoreToken).not.toBe(first.output.scoreToken);
    expect(await scoreStatus(first.output.scoreToken)).toBe(401);
    expect(await scoreStatus(rotated.output.scoreToken)).toBe(404);
  }, 60_000);

  it('prints a callback secret once with --callback-secret, and a new one with --rotate-callback-secret that the service then signs with', async () => {
    const username = `tok-${randomUUID().slice(0, 8)}`;
    const first = await token(username, '--callback-secret');
    expect(first.output.callbackSecret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    const again = await token(username, '--callback-secret');
    expect(again.output).not.toHaveProperty('callbackSecret');
    expect(again.stderr).toMatch(/already has a callback secret.*--rotate-callback-secret/);
    const rotated = await token(username, '--rotate-callback-secret');
    expect(rotated.output.callbackSecret).toMatch(/^whsec_/);
    expect(rotated.output.callbackSecret).not.toBe(first.output.callbackSecret);
    expect(await testApp.services.users.callbackSecretOf(Number(first.output.userId))).toBe(
      rotated.output.callbackSecret,
    );
  }, 60_000);

  it('disables and enables a user', async () => {
    const username = `tok-${randomUUID().slice(0, 8)}`;
    const { output } = await token(username);
    expect((await token(username, '--disable')).output).toEqual({ userId: output.userId, username, enabled: false });
    expect(await scoreStatus(output.scoreToken)).toBe(401);
    expect((await token(username, '--enable')).output).toEqual({ userId: output.userId, username, enabled: true });
    expect(await scoreStatus(output.scoreToken)).toBe(404);
  }, 60_000);

  it('refuses an unknown option with the usage', async () => {
    await expect(token('someone', '--rotat')).rejects.toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/unknown option --rotat/),
    });
  });
});
