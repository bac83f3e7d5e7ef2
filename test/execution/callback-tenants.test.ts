import { createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { UserService } from '../../src/auth/user-service.js';
import { UserStore } from '../../src/auth/user-store.js';
import { retryDelaySeconds } from '../../src/execution/callback-delivery.js';
import { verifyCallbackSignature, verifyCallbackSignatureV2 } from '../../src/execution/callback-signature.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { CallbackReceiver, isolateJobStore, waitFor, type ReceivedCallback } from './support.js';

/** Per-tenant callback secrets (v2 signatures) and per-tenant delivery slots. */

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let slowTenant: TestUser;
let aliceSecret: string;
let bobSecret: string;
const receiver = new CallbackReceiver();

/** A receiver that answers each callback only after `delayMs`, counting those in flight. */
class SlowReceiver {
  inFlight = 0;
  received = 0;
  private server?: http.Server;
  constructor(private readonly delayMs: number) {}
  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.inFlight += 1;
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          this.inFlight -= 1;
          this.received += 1;
          res.writeHead(200).end('{}');
        }, this.delayMs),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}${path}`;
  }
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
const slow = new SlowReceiver(3000);

beforeAll(async () => {
  isolateJobStore('callback-tenants');
  // Few job slots, to show that one tenant's slow receiver cannot take them all (CALLBACK_SLOTS_PER_TENANT: 2).
  process.env.WORKER_CALLBACK_CONCURRENCY = '4';
  process.env.CALLBACK_SLOTS_PER_TENANT = '2';
  t = await createTestApp({ configOverrides: { outboundAllowList: ['127.0.0.1'] } });
  await t.services.execution.startWorker();
  [alice, bob, slowTenant] = await Promise.all([
    t.newUser({ prefix: 'alice' }),
    t.newUser({ prefix: 'bob' }),
    t.newUser({ prefix: 'slow' }),
  ]);
  for (const user of [alice, bob, slowTenant])
    await deployScenario(t.services.db, user.id, 'double', doublingScenario());
  aliceSecret = (await t.services.users.issueCallbackSecret(alice.id)) as string;
  bobSecret = (await t.services.users.issueCallbackSecret(bob.id)) as string;
  await Promise.all([receiver.start(), slow.start()]);
});
afterAll(async () => {
  delete process.env.WORKER_CALLBACK_CONCURRENCY;
  delete process.env.CALLBACK_SLOTS_PER_TENANT;
  await Promise.all([receiver.stop(), slow.stop()]);
  await t.close();
});

const submit = (user: TestUser, headers: Record<string, string>) =>
  request(t.app)
    .post('/api/scenario/code/scoreasync/double')
    .set('Score-Token', user.scoreToken)
    .set(headers)
    .send({ a: 2 });

/** What a receiver verifies: the v2 signature with its tenant's secret, over its own URL, within its replay window. */
function receiverAccepts(secret: string, url: string, call: ReceivedCallback, windowSeconds = 300): boolean {
  const timestamp = Number(call.headers['x-sce-timestamp']);
  if (!(Math.abs(Date.now() / 1000 - timestamp) <= windowSeconds)) return false;
  const signature = call.headers['x-sce-signature-v2'];
  return (
    typeof signature === 'string' &&
    verifyCallbackSignatureV2(
      secret,
      { timestamp, url, requestId: String(call.headers['x-sce-requestid']), body: call.body },
      signature,
    )
  );
}

type DocsVerifier = (secret: string, headers: http.IncomingHttpHeaders, rawBody: string) => boolean;

/** The receiver's verifier exactly as docs/execution.md prints it, for the receiver at `url`. */
function docsVerifier(url: string): DocsVerifier {
  const docs = readFileSync(new URL('../../docs/execution.md', import.meta.url), 'utf8');
  const block = /Receiver-side verification \(Node\), v2[^\n]*\n```js\n([\s\S]*?)```/.exec(docs);
  if (!block) throw new Error('docs/execution.md has no v2 verifier block');
  const source = block[1]
    .replace(/^import .*\n/m, '')
    .replace(/const MY_CALLBACK_URL = [^;]*;/, `const MY_CALLBACK_URL = ${JSON.stringify(url)};`);
  return new Function('createHmac', 'timingSafeEqual', `${source}\nreturn verify;`)(
    createHmac,
    timingSafeEqual,
  ) as DocsVerifier;
}

describe('callback secrets', () => {
  it('issues a secret once, stored sealed (never as issued), and rotates it', async () => {
    const user = await t.newUser();
    const secret = await t.services.users.issueCallbackSecret(user.id);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(await t.services.users.issueCallbackSecret(user.id)).toBeUndefined();
    const row = (await t.services.db('users').where({ id: user.id }).first('callback_secret_sealed')) as {
      callback_secret_sealed: Buffer;
    };
    expect(row.callback_secret_sealed.includes(Buffer.from(secret as string))).toBe(false);
    expect(await t.services.users.callbackSecretOf(user.id)).toBe(secret);
    const rotated = await t.services.users.issueCallbackSecret(user.id, { rotate: true });
    expect(rotated).not.toBe(secret);
    expect(await t.services.users.callbackSecretOf(user.id)).toBe(rotated);
  });

  it("does not let bob produce a callback alice's receiver accepts, even to her URL with her request id", async () => {
    const aliceUrl = receiver.url('/alice-hook');
    const requestId = `shared-${Date.now()}`;
    expect((await submit(alice, { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': aliceUrl })).status).toBe(202);
    expect((await submit(bob, { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': aliceUrl })).status).toBe(202);
    const calls = await waitFor(async () => {
      const found = receiver.received.filter((call) => call.headers['x-sce-requestid'] === requestId);
      return found.length === 2 ? found : undefined;
    });
    const accepted = calls.filter((call) => receiverAccepts(aliceSecret, aliceUrl, call));
    expect(accepted).toHaveLength(1);
    const bobs = calls.find((call) => !accepted.includes(call)) as ReceivedCallback;
    expect(receiverAccepts(bobSecret, aliceUrl, bobs)).toBe(true);
    // The signature covers the URL: alice's callback, passed on to another receiver, is refused there.
    expect(receiverAccepts(aliceSecret, receiver.url('/elsewhere'), accepted[0])).toBe(false);
    // and its request id and body: changing either breaks it.
    expect(
      receiverAccepts(aliceSecret, aliceUrl, {
        ...accepted[0],
        headers: { ...accepted[0].headers, 'x-sce-requestid': 'other' },
      }),
    ).toBe(false);
    expect(receiverAccepts(aliceSecret, aliceUrl, { ...accepted[0], body: accepted[0].body.replace('4', '5') })).toBe(
      false,
    );
    // Outside the replay window it is refused whatever it carries.
    expect(receiverAccepts(aliceSecret, aliceUrl, accepted[0], -1)).toBe(false);
    // The verifier docs/execution.md gives receivers: alice's callback once, never bob's, never the same attempt twice.
    const verify = docsVerifier(aliceUrl);
    expect(verify(aliceSecret, accepted[0].headers, accepted[0].body)).toBe(true);
    expect(verify(aliceSecret, accepted[0].headers, accepted[0].body)).toBe(false);
    expect(verify(aliceSecret, bobs.headers, bobs.body)).toBe(false);
    expect(docsVerifier(receiver.url('/elsewhere'))(aliceSecret, accepted[0].headers, accepted[0].body)).toBe(false);
    // The legacy signature (sent during the transition) is what bob could always produce: it proves nothing about the tenant.
    for (const call of calls)
      expect(
        verifyCallbackSignature(
          t.config.callbackSigningSecret,
          String(call.headers['x-sce-timestamp']),
          call.body,
          String(call.headers['x-sce-signature']),
        ),
      ).toBe(true);
  });

  it('sends only the legacy signature for a user without a callback secret, during the transition', async () => {
    const requestId = `legacy-${Date.now()}`;
    await submit(slowTenant, { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': receiver.url('/legacy') });
    const call = await waitFor(async () => receiver.received.find((c) => c.headers['x-sce-requestid'] === requestId));
    expect(call.headers['x-sce-signature-v2']).toBeUndefined();
    expect(call.headers['x-sce-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
  });

  it('refuses a callback at submit, naming the fix, for a user without a secret once the legacy signature is off', async () => {
    t.config.callbackLegacySignature = false;
    try {
      const response = await submit(slowTenant, { 'X-SCE-CallbackUrl': receiver.url('/no-secret') });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({
        code: 'CALLBACK_REFUSED',
        details: [{ path: 'header.X-SCE-CallbackUrl' }],
      });
      expect(response.body.message).toContain('--callback-secret');
      expect((await submit(alice, { 'X-SCE-CallbackUrl': receiver.url('/has-secret') })).status).toBe(202);
    } finally {
      t.config.callbackLegacySignature = true;
    }
  });
});

describe('callback secret rotation', () => {
  /** The next callback of `user`'s run to `path`, as received. */
  async function nextCallback(user: TestUser, path: string): Promise<ReceivedCallback> {
    const requestId = `rotation-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    expect((await submit(user, { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': receiver.url(path) })).status).toBe(
      202,
    );
    return waitFor(async () => receiver.received.find((call) => call.headers['x-sce-requestid'] === requestId));
  }

  it('signs with the new and the replaced secret during the overlap, so a receiver holding either accepts', async () => {
    const user = await t.newUser({ prefix: 'rotating' });
    await deployScenario(t.services.db, user.id, 'double', doublingScenario());
    const before = (await t.services.users.issueCallbackSecret(user.id)) as string;
    const after = (await t.services.users.issueCallbackSecret(user.id, { rotate: true })) as string;
    const url = receiver.url('/rotating');
    const call = await nextCallback(user, '/rotating');
    const signatures = String(call.headers['x-sce-signature-v2']).split(',');
    expect(signatures).toHaveLength(2);
    expect(signatures.every((signature) => /^v2=[0-9a-f]{64}$/.test(signature))).toBe(true);
    // The new secret's signature first; each receiver checks the one it can.
    const timestamp = Number(call.headers['x-sce-timestamp']);
    const signed = { timestamp, url, requestId: String(call.headers['x-sce-requestid']), body: call.body };
    expect(verifyCallbackSignatureV2(after, signed, signatures[0])).toBe(true);
    expect(verifyCallbackSignatureV2(before, signed, signatures[1])).toBe(true);
    expect(receiverAccepts(after, url, call)).toBe(true);
    expect(receiverAccepts(before, url, call)).toBe(true);
    // The docs' verifier too, with either secret (each receiver sees the attempt once).
    expect(docsVerifier(url)(before, call.headers, call.body)).toBe(true);
    expect(docsVerifier(url)(after, call.headers, call.body)).toBe(true);
    // Another tenant's secret is still refused.
    expect(receiverAccepts(aliceSecret, url, call)).toBe(false);
  });

  it('signs with the new secret alone once the overlap is over, and keeps only the secret last replaced', async () => {
    const user = await t.newUser({ prefix: 'rotated' });
    await deployScenario(t.services.db, user.id, 'double', doublingScenario());
    const first = (await t.services.users.issueCallbackSecret(user.id)) as string;
    const second = (await t.services.users.issueCallbackSecret(user.id, { rotate: true })) as string;
    const third = (await t.services.users.issueCallbackSecret(user.id, { rotate: true })) as string;
    expect(await t.services.users.callbackSecretsOf(user.id)).toEqual([third, second]);
    expect((await t.services.users.callbackSecretsOf(user.id)).includes(first)).toBe(false);
    // The overlap ends (as CALLBACK_SECRET_OVERLAP_SECONDS after the rotation would).
    await t.services
      .db('users')
      .where({ id: user.id })
      .update({ callback_secret_previous_until: t.services.db.raw('NOW(3) - INTERVAL 1 SECOND') });
    expect(await t.services.users.callbackSecretsOf(user.id)).toEqual([third]);
    const call = await nextCallback(user, '/rotated');
    expect(String(call.headers['x-sce-signature-v2'])).toMatch(/^v2=[0-9a-f]{64}$/);
    expect(receiverAccepts(third, receiver.url('/rotated'), call)).toBe(true);
    expect(receiverAccepts(second, receiver.url('/rotated'), call)).toBe(false);
  });

  it('keeps no previous secret when the overlap is 0 (a leaked secret), nor for a first issue', async () => {
    const user = await t.newUser({ prefix: 'leaked' });
    const noOverlap = new UserService(new UserStore(t.services.db), {
      scoreTokenCacheMs: 0,
      callbackSecretsKey: t.config.callbackSecretsKey,
      callbackSecretOverlapSeconds: 0,
    });
    const first = (await t.services.users.issueCallbackSecret(user.id)) as string;
    expect(await t.services.users.callbackSecretsOf(user.id)).toEqual([first]);
    const replaced = (await noOverlap.issueCallbackSecret(user.id, { rotate: true })) as string;
    expect(await t.services.users.callbackSecretsOf(user.id)).toEqual([replaced]);
  });
});

describe('callback delivery slots per tenant', () => {
  it("does not delay another tenant's callback behind one tenant's slow receiver", async () => {
    for (let run = 0; run < 8; run += 1)
      expect((await submit(slowTenant, { 'X-SCE-CallbackUrl': slow.url(`/slow-${run}`) })).status).toBe(202);
    // The slow tenant's deliveries are in flight, at most its two slots of them.
    await waitFor(async () => (slow.inFlight >= 2 ? true : undefined));
    expect(slow.inFlight).toBeLessThanOrEqual(2);
    const requestId = `fast-${Date.now()}`;
    const submitted = Date.now();
    expect(
      (await submit(alice, { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': receiver.url('/fast') })).status,
    ).toBe(202);
    const call = await waitFor(async () => receiver.received.find((c) => c.headers['x-sce-requestid'] === requestId));
    // Behind four shared job slots all held by 3 s deliveries it would have waited about 3 s.
    expect(call.at - submitted).toBeLessThan(1500);
    expect(slow.inFlight).toBeLessThanOrEqual(2);
    // The slow tenant's callbacks all arrive in the end.
    await waitFor(async () => (slow.received === 8 ? true : undefined), 30_000);
  }, 40_000);
});

describe('retry delays', () => {
  it('raise a requested delay to the floor and double it for each retry, up to the maximum', () => {
    const settings = { retryFloorSeconds: 1, retryMaxDelaySeconds: 3600 };
    expect([1, 2, 3, 4].map((failed) => retryDelaySeconds(0, failed, settings))).toEqual([1, 2, 4, 8]);
    expect([1, 2, 3].map((failed) => retryDelaySeconds(5, failed, settings))).toEqual([5, 10, 20]);
    expect(retryDelaySeconds(3000, 3, settings)).toBe(3600);
  });
});
