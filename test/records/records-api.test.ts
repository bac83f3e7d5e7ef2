import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import type { DecisionRecord } from '../../src/records/decision-record.js';
import { RecordCursorCodec } from '../../src/records/record-cursor.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { aRecord } from './record-fixture.js';
import { bearer, getRecord, listRecords, putSettings, scenarioIdOf } from './support.js';

/** listDecisionRecords, getDecisionRecord, getRecordingSettings, updateRecordingSettings: success and every error they declare. */

let t: TestApp;
let alice: TestUser;
let bob: TestUser;
let admin: TestUser;
let creditId: string;
let otherId: string;
let bobsId: string;
// Recent (no retention sweep deletes them), to the minute.
const T0 = Math.floor(Date.now() / 60_000) * 60_000 - 3_600_000;
const at = (minutes: number) => new Date(T0 + minutes * 60_000);
let stored: DecisionRecord[];

const record = (scenarioId: string, overrides: Partial<DecisionRecord>) =>
  aRecord(Number(scenarioId), {
    ownerId: alice.id,
    requesterId: alice.id,
    inputs: { a: 1 },
    result: { decision: 'APPROVE', score: 600 },
    ...overrides,
  });

beforeAll(async () => {
  t = await createTestApp();
  [alice, bob, admin] = [await t.newUser(), await t.newUser(), await t.newUser({ admin: true })];
  await deployScenario(t.services.db, alice.id, 'credit', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'other', doublingScenario());
  await deployScenario(t.services.db, bob.id, 'bobs', doublingScenario());
  creditId = await scenarioIdOf(t, alice.id, 'credit');
  otherId = await scenarioIdOf(t, alice.id, 'other');
  bobsId = await scenarioIdOf(t, bob.id, 'bobs');
  stored = [
    record(creditId, { beganAt: at(1), version: '1', requestId: 'r1', result: { decision: 'APPROVE', score: 700 } }),
    record(creditId, {
      beganAt: at(2),
      version: '2',
      requestId: 'r2',
      mode: 'ASYNC',
      result: { decision: 'DECLINE', score: 300 },
    }),
    record(creditId, {
      beganAt: at(3),
      version: '2',
      requestId: 'r3',
      state: 'FAILED',
      result: null,
      error: { code: 'SCRIPT_ERROR', message: 'boom', nodeId: 'n' },
    }),
    record(creditId, {
      beganAt: at(4),
      version: '2',
      requestId: 'r4',
      mode: 'BATCH',
      batchId: randomUUID(),
      result: { decision: 'APPROVE', score: 650 },
      trace: [{ nodeId: 'start', name: 'start', type: 'START', read: {}, wrote: { a: 1 }, durationMicros: 2 }],
      captures: [
        {
          seq: 0,
          kind: 'HTTP_CALL',
          nodeId: 'h',
          callPath: [],
          attempt: 1,
          request: { method: 'GET', url: 'https://bureau.example/x' },
          response: { status: 200, body: { ok: true } },
        },
      ],
    }),
    record(otherId, { beganAt: at(5), scenarioName: 'other', requestId: 'o1' }),
  ];
  for (const r of stored) t.services.records.recorder.record(r);
  await t.services.records.recorder.flush();
});
afterAll(() => t.close());

const requestIds = (response: request.Response) => response.body.records.map((r: { requestId: string }) => r.requestId);

describe('listDecisionRecords', () => {
  it('answers 200 with the records of the scenario, newest first, as summaries', async () => {
    const response = await listRecords(t, alice, creditId);
    expect(response.status).toBe(200);
    expect(requestIds(response)).toEqual(['r4', 'r3', 'r2', 'r1']);
    expect(response.body.nextCursor).toBeNull();
    expect(response.body.records[0]).toMatchObject({
      id: stored[3].id,
      scenarioId: creditId,
      mode: 'BATCH',
      batchId: stored[3].batchId,
      hasTrace: true,
      captureCount: 1,
      beganAt: at(4).toISOString(),
    });
    expect(response.body.records[0]).not.toHaveProperty('trace');
  });

  it('pages with limit and nextCursor, without gaps or repeats', async () => {
    const first = await listRecords(t, alice, creditId, { limit: 3 });
    expect(requestIds(first)).toEqual(['r4', 'r3', 'r2']);
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await listRecords(t, alice, creditId, { limit: 3, cursor: first.body.nextCursor });
    expect(requestIds(second)).toEqual(['r1']);
    expect(second.body.nextCursor).toBeNull();
  });

  it('filters by version, state, request id and time range', async () => {
    expect(requestIds(await listRecords(t, alice, creditId, { version: '2' }))).toEqual(['r4', 'r3', 'r2']);
    expect(requestIds(await listRecords(t, alice, creditId, { state: 'FAILED' }))).toEqual(['r3']);
    expect(requestIds(await listRecords(t, alice, creditId, { requestId: 'r2' }))).toEqual(['r2']);
    expect(
      requestIds(await listRecords(t, alice, creditId, { from: at(2).toISOString(), to: at(4).toISOString() })),
    ).toEqual(['r3', 'r2']);
  });

  it('filters by output values (output[name]=value, all must hold), numbers as JSON writes them', async () => {
    const approved = await request(t.app)
      .get(`/api/scenario/${creditId}/records?output[decision]=APPROVE`)
      .set(bearer(alice));
    expect(approved.status).toBe(200);
    expect(requestIds(approved)).toEqual(['r4', 'r1']);
    const both = await request(t.app)
      .get(`/api/scenario/${creditId}/records?output[decision]=APPROVE&output[score]=700`)
      .set(bearer(alice));
    expect(requestIds(both)).toEqual(['r1']);
    const combined = await request(t.app)
      .get(`/api/scenario/${creditId}/records?version=2&output%5Bdecision%5D=APPROVE`)
      .set(bearer(alice));
    expect(requestIds(combined)).toEqual(['r4']);
  });

  it('filters by outputs named like Object.prototype properties, and decodes values exactly once', async () => {
    await deployScenario(t.services.db, alice.id, 'odd-outputs', doublingScenario());
    const oddId = await scenarioIdOf(t, alice.id, 'odd-outputs');
    t.services.records.recorder.record(
      record(oddId, { beganAt: at(1), requestId: 'plain', result: { decision: 'A+B&C=D %41' } }),
    );
    t.services.records.recorder.record(
      record(oddId, {
        beganAt: at(2),
        requestId: 'proto',
        result: JSON.parse('{"constructor":"x","toString":"y","__proto__":"z","decision":"N"}') as Record<
          string,
          unknown
        >,
      }),
    );
    await t.services.records.recorder.flush();
    const list = (query: string) => request(t.app).get(`/api/scenario/${oddId}/records?${query}`).set(bearer(alice));
    // Each of these used to be dropped by the validator's qs (every record listed).
    expect(requestIds(await list('output[constructor]=x'))).toEqual(['proto']);
    expect(requestIds(await list('output[toString]=nope'))).toEqual([]);
    expect(requestIds(await list('output[__proto__]=z'))).toEqual(['proto']);
    // %2B, %26, %3D and %2541 are a value's `+`, `&`, `=` and `%41`, not a space, a cut or an `A`.
    expect(requestIds(await list(`output[decision]=${encodeURIComponent('A+B&C=D %41')}`))).toEqual(['plain']);
    const repeated = await list('output[decision]=N&output[decision]=A');
    expect(repeated.status).toBe(400);
    expect(repeated.body.details[0].path).toBe('query.output[decision]');
    const nested = await list('output[a][b]=1');
    expect(nested.status).toBe(400);
    expect(nested.body.details[0].path).toBe('query.output');
  });

  it("lets an admin list another user's records when the context names the owner", async () => {
    const response = await listRecords(t, admin, creditId, {
      context: JSON.stringify({
        actors: { requester: { username: admin.username }, resourceOwner: { username: alice.username } },
      }),
    });
    expect(response.status).toBe(200);
    expect(response.body.records).toHaveLength(4);
  });

  it('reads a cursor of any place the service could issue as a place, never a failure: a slot past its page reads the whole page', async () => {
    const all = await listRecords(t, alice, creditId, { limit: 500 });
    const page = Number(
      (
        (await t.services
          .db('decision_record_pages')
          .where({ scenario_id: Number(creditId) })
          .max({ seq: 'seq' })
          .first()) as { seq: number }
      ).seq,
    );
    // Sealed with the service's own key: what an attacker cannot make, checked for robustness anyway.
    const cursors = new RecordCursorCodec(t.config.records.maskingSecret);
    for (const place of [
      { page, slot: 999_999 },
      { page: page + 1_000_000, slot: 0 },
      { page: 0, slot: 0 },
    ]) {
      const response = await listRecords(t, alice, creditId, {
        limit: 500,
        cursor: cursors.encode(Number(creditId), place),
      });
      expect(response.status).toBe(200);
      expect(response.body.records.length).toBeLessThanOrEqual(all.body.records.length);
    }
    const past = await listRecords(t, alice, creditId, {
      limit: 500,
      cursor: cursors.encode(Number(creditId), { page, slot: 999_999 }),
    });
    expect(past.body.records.map((r: { id: string }) => r.id)).toEqual(
      all.body.records.map((r: { id: string }) => r.id),
    );
  });

  it("issues opaque cursors: no page number in them, and forged, altered, readable r2 or another scenario's cursors are 400", async () => {
    const first = await listRecords(t, alice, creditId, { limit: 1 });
    const cursor = first.body.nextCursor as string;
    const page = Number(
      (
        (await t.services
          .db('decision_record_pages')
          .where({ scenario_id: Number(creditId) })
          .max({ seq: 'seq' })
          .first()) as { seq: number }
      ).seq,
    );
    const bytes = Buffer.from(cursor, 'base64url');
    // The page number must not be readable in any plain form (the old `r2:<page>:<slot>`, JSON, a big-endian
    // integer). A bare digit is not checked: a random ciphertext byte is the character '5' one time in 256.
    const text = bytes.toString('latin1');
    expect(text).not.toContain(`:${page}:`);
    expect(text).not.toContain('page');
    expect(bytes.includes(Buffer.from(page.toString(16).padStart(16, '0'), 'hex'))).toBe(false);
    // The same place twice: two different cursors (nothing to compare across lists), both valid.
    const again = (await listRecords(t, alice, creditId, { limit: 1 })).body.nextCursor as string;
    expect(again).not.toBe(cursor);
    expect((await listRecords(t, alice, creditId, { limit: 1, cursor: again })).status).toBe(200);
    const altered = Buffer.from(bytes);
    altered[20] ^= 1;
    const otherScenario = new RecordCursorCodec(t.config.records.maskingSecret).encode(Number(creditId) + 1, {
      page,
      slot: 0,
    });
    for (const refused of [
      altered.toString('base64url'),
      Buffer.from(`r2:${page}:0`).toString('base64url'),
      otherScenario,
      new RecordCursorCodec('another secret').encode(Number(creditId), { page, slot: 0 }),
    ]) {
      const response = await listRecords(t, alice, creditId, { limit: 1, cursor: refused });
      expect(response.status).toBe(400);
      expect(response.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'query.cursor' }] });
    }
  });

  it('answers 400 naming the parameter for a cursor it did not issue, a limit out of range, a bad state, time or output name', async () => {
    const cursor = await listRecords(t, alice, creditId, { cursor: 'bm90LWEtY3Vyc29y' });
    expect(cursor.status).toBe(400);
    expect(cursor.body).toMatchObject({ code: 'VALIDATION_FAILED', details: [{ path: 'query.cursor' }] });
    for (const query of [
      { limit: 0 },
      { limit: 501 },
      { state: 'RUNNING' },
      { from: 'yesterday' },
      { from: '2026-11-23T25:00:00Z' },
      { to: '2026-02-30T00:00:00Z' },
      // Valid RFC 3339, but year 10000 and year 0 in UTC: outside what a record can be dated.
      { from: '9999-12-31T23:59:59-23:59' },
      { to: '0000-01-01T00:00:00Z' },
    ]) {
      const response = await listRecords(t, alice, creditId, query);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
    }
    const badName = await request(t.app).get(`/api/scenario/${creditId}/records?output[a%20b]=1`).set(bearer(alice));
    expect(badName.status).toBe(400);
  });

  it('answers 401 without a bearer token', async () => {
    const response = await request(t.app).get(`/api/scenario/${creditId}/records`);
    expect(response.status).toBe(401);
  });

  it("answers 403 for another user's scenario", async () => {
    const response = await listRecords(t, bob, creditId);
    expect(response.status).toBe(403);
    expect(response.body.code).toBe('FORBIDDEN');
  });

  it('answers 404 for an unknown scenario and for an id that is not one of ours', async () => {
    for (const id of ['999999999', 'not-an-id']) {
      const response = await listRecords(t, alice, id);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
    }
  });
});

describe('getDecisionRecord', () => {
  it('answers 200 with the whole record: trace and captures included', async () => {
    const response = await getRecord(t, alice, creditId, stored[3].id);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: stored[3].id,
      requestId: 'r4',
      version: '2',
      inputs: { a: 1 },
      result: { decision: 'APPROVE', score: 650 },
      trace: [{ nodeId: 'start' }],
      captures: [{ kind: 'HTTP_CALL', nodeId: 'h', response: { status: 200 } }],
    });
    expect(response.body).not.toHaveProperty('hasTrace');
  });

  it('answers 404 RECORD_NOT_FOUND for an unknown record and for a record of another scenario', async () => {
    for (const recordId of [randomUUID(), stored[4].id]) {
      const response = await getRecord(t, alice, creditId, recordId);
      expect(response.status).toBe(404);
      expect(response.body.code).toBe('RECORD_NOT_FOUND');
    }
  });

  it('answers 404 SCENARIO_NOT_FOUND for an unknown scenario', async () => {
    expect((await getRecord(t, alice, '999999999', stored[0].id)).body.code).toBe('SCENARIO_NOT_FOUND');
  });

  it("answers 403 for another user's scenario, 401 without a token and 400 for an over-long record id", async () => {
    expect((await getRecord(t, bob, creditId, stored[0].id)).status).toBe(403);
    expect((await request(t.app).get(`/api/scenario/${creditId}/records/${stored[0].id}`)).status).toBe(401);
    const long = await getRecord(t, alice, creditId, 'x'.repeat(37));
    expect(long.status).toBe(400);
    expect(long.body.details[0].path).toContain('recordId');
  });
});

describe('getRecordingSettings and updateRecordingSettings', () => {
  it('answers the defaults for a scenario that never set them', async () => {
    const response = await request(t.app).get(`/api/scenario/${bobsId}/recording`).set(bearer(bob));
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ enabled: true, retentionDays: 30, syncSampleRate: 1, trace: false });
  });

  it('replaces the settings and answers them; the next read sees them', async () => {
    const settings = { enabled: false, retentionDays: 7, syncSampleRate: 0.25, trace: true };
    const response = await putSettings(t, alice, otherId, settings);
    expect(response.status).toBe(200);
    expect(response.body).toEqual(settings);
    expect((await request(t.app).get(`/api/scenario/${otherId}/recording`).set(bearer(alice))).body).toEqual(settings);
  });

  it('answers 400 naming the field for a missing or out-of-range field or an unknown one', async () => {
    for (const body of [
      { enabled: true, retentionDays: 30, syncSampleRate: 1.5, trace: false },
      { enabled: true, retentionDays: 0, syncSampleRate: 1, trace: false },
      { enabled: true, retentionDays: 30, syncSampleRate: 1 },
      { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: false, extra: 1 },
    ]) {
      const response = await putSettings(t, alice, creditId, body);
      expect(response.status).toBe(400);
      expect(response.body.details[0].path).toMatch(/^body/);
    }
  });

  it("answers 403 for another user's scenario (both operations), 404 for an unknown one, 401 without a token", async () => {
    expect((await request(t.app).get(`/api/scenario/${creditId}/recording`).set(bearer(bob))).status).toBe(403);
    expect(
      (await putSettings(t, bob, creditId, { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: false }))
        .status,
    ).toBe(403);
    expect(
      (await putSettings(t, alice, '999999999', { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: false }))
        .body.code,
    ).toBe('SCENARIO_NOT_FOUND');
    expect((await request(t.app).get(`/api/scenario/999999999/recording`).set(bearer(alice))).status).toBe(404);
    expect((await request(t.app).get(`/api/scenario/${creditId}/recording`)).status).toBe(401);
  });

  it('answers 415 for a body that is not JSON and 413 for one over the size limit', async () => {
    const text = await request(t.app)
      .put(`/api/scenario/${creditId}/recording`)
      .set(bearer(alice))
      .set('content-type', 'text/plain')
      .send('enabled');
    expect(text.status).toBe(415);
    const huge = await request(t.app)
      .put(`/api/scenario/${creditId}/recording`)
      .set(bearer(alice))
      .set('content-type', 'application/json')
      .send(
        JSON.stringify({
          enabled: true,
          retentionDays: 30,
          syncSampleRate: 1,
          trace: false,
          pad: 'x'.repeat(t.config.limits.bodyBytes),
        }),
      );
    expect(huge.status).toBe(413);
  });
});
