import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import request from 'supertest';
import { verifyCallbackSignature } from '../../src/execution/callback-signature.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { createUndeployedScenario, deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { CallbackReceiver, isolateJobStore, waitFor } from './support.js';

let t: TestApp;
let alice: TestUser;
const receiver = new CallbackReceiver();

beforeAll(async () => {
  isolateJobStore('async');
  t = await createTestApp({ configOverrides: { outboundAllowList: ['127.0.0.1'] } });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  await deployScenario(t.services.db, alice.id, 'other', doublingScenario());
  await createUndeployedScenario(t.services.db, alice.id, 'draft');
  await receiver.start();
});
afterAll(async () => {
  await receiver.stop();
  await t.close();
});

const submit = (name: string, body: unknown, headers: Record<string, string> = {}, token = alice.scoreToken) =>
  request(t.app)
    .post(`/api/scenario/code/scoreasync/${encodeURIComponent(name)}`)
    .set('Score-Token', token)
    .set(headers)
    .send(body as object);
const fetchResult = (name: string, requestId: string, token = alice.scoreToken) =>
  request(t.app)
    .get(`/api/scenario/code/scoreasyncresult/${encodeURIComponent(name)}`)
    .set('Score-Token', token)
    .set('X-SCE-RequestId', requestId);
const finished = (name: string, requestId: string) =>
  waitFor(async () => {
    const response = await fetchResult(name, requestId);
    return response.status === 200 ? response : undefined;
  });

describe('scoreAsync and getAsyncScoreResult', () => {
  it('answers 202 with a generated request id, then 200 with the result once run', async () => {
    const submitted = await submit('double', { a: 4 });
    expect(submitted.status).toBe(202);
    const { requestId } = submitted.body;
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(submitted.headers['x-sce-requestid']).toBe(requestId);
    const response = await finished('double', requestId);
    expect(response.body).toMatchObject({
      runId: requestId,
      requestId,
      scenarioName: 'double',
      version: '1',
      state: 'SUCCEEDED',
      result: { doubled: 8 },
      error: null,
    });
    // A finished run's input (personal data, maybe) is not kept: nothing reads it once the run has finished.
    expect(
      await t.services.db('run_results').where({ user_id: alice.id, request_id: requestId }).first('input'),
    ).toEqual({ input: null });
  });

  it('keeps the caller’s request id', async () => {
    const requestId = `mine-${randomUUID()}`;
    const submitted = await submit('double', { a: 1 }, { 'X-SCE-RequestId': requestId });
    expect(submitted.body).toEqual({ requestId });
    expect((await finished('double', requestId)).body.result).toEqual({ doubled: 2 });
  });

  it('answers 202 with QUEUED or RUNNING while the run is unfinished', async () => {
    const requestId = randomUUID();
    await t.services.execution.store.insertAsyncRun({
      id: randomUUID(),
      userId: alice.id,
      requestId,
      scenarioName: 'double',
      input: { a: 1 },
      callback: null,
    });
    const response = await fetchResult('double', requestId);
    expect(response.status).toBe(202);
    expect(response.headers['retry-after']).toBe('1');
    expect(response.body).toEqual({ requestId, state: 'QUEUED' });
  });

  it('stores a failed run with its error naming the node', async () => {
    const { body } = await submit('double', { a: 13 });
    const response = await finished('double', body.requestId);
    expect(response.body).toMatchObject({
      state: 'FAILED',
      result: null,
      error: { code: 'SCRIPT_ERROR', nodeId: 'explode', nodeType: 'SCRIPT' },
    });
    expect(response.body.error.message).toContain('unlucky thirteen');
  });

  it('stores invalid inputs as a failed run naming each variable', async () => {
    const { body } = await submit('double', { a: 'x', extra: 1 });
    const response = await finished('double', body.requestId);
    expect(response.body.error.code).toBe('INVALID_INPUT');
    expect(response.body.error.violations.map((v: { variable: string }) => v.variable).sort()).toEqual(['a', 'extra']);
  });

  it('answers 409 REQUEST_ID_TAKEN when the request id was used, and changes nothing', async () => {
    const requestId = randomUUID();
    await submit('double', { a: 5 }, { 'X-SCE-RequestId': requestId });
    const again = await submit('double', { a: 6 }, { 'X-SCE-RequestId': requestId });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('REQUEST_ID_TAKEN');
    expect((await finished('double', requestId)).body.result).toEqual({ doubled: 10 });
  });

  it('stores submissions that arrive together with one insert and one job per group, and refuses a duplicate within a group', async () => {
    const enqueue = jest.spyOn(t.services.execution.queue, 'enqueueRuns');
    const requestIds = Array.from({ length: 40 }, () => randomUUID());
    const answers = await Promise.all(
      [...requestIds, requestIds[7]].map((requestId, i) =>
        submit('double', { a: 100 + i }, { 'X-SCE-RequestId': requestId }),
      ),
    );
    expect(answers.filter((answer) => answer.status === 202)).toHaveLength(40);
    expect(answers.filter((answer) => answer.status === 409).map((answer) => answer.body.code)).toEqual([
      'REQUEST_ID_TAKEN',
    ]);
    const jobs = enqueue.mock.calls.map(([ids]) => ids);
    enqueue.mockRestore();
    expect(jobs.flat().sort()).toHaveLength(40);
    expect(jobs.length).toBeLessThan(20);
    const results = await Promise.all(requestIds.map((requestId) => finished('double', requestId)));
    expect(results.every((response) => response.body.state === 'SUCCEEDED')).toBe(true);
  });

  it('lets two users use the same request id', async () => {
    const bob = await t.newUser();
    await deployScenario(t.services.db, bob.id, 'double', doublingScenario());
    const requestId = randomUUID();
    expect((await submit('double', { a: 1 }, { 'X-SCE-RequestId': requestId })).status).toBe(202);
    expect((await submit('double', { a: 1 }, { 'X-SCE-RequestId': requestId }, bob.scoreToken)).status).toBe(202);
  });

  it('answers 404 when the scenario is unknown or not deployed at submit time', async () => {
    expect((await submit('nope', { a: 1 })).body.code).toBe('SCENARIO_NOT_FOUND');
    const draft = await submit('draft', { a: 1 });
    expect(draft.status).toBe(404);
    expect(draft.body.code).toBe('SCENARIO_NOT_DEPLOYED');
  });

  it("answers 404 RESULT_NOT_FOUND for an unknown id, another scenario's name or another user's run", async () => {
    const { body } = await submit('double', { a: 1 });
    await finished('double', body.requestId);
    expect((await fetchResult('double', randomUUID())).body.code).toBe('RESULT_NOT_FOUND');
    expect((await fetchResult('other', body.requestId)).status).toBe(404);
    const bob = await t.newUser();
    expect((await fetchResult('double', body.requestId, bob.scoreToken)).status).toBe(404);
  });

  it('answers 400 for a malformed request id or out-of-bounds callback settings, 401 without a token', async () => {
    expect((await submit('double', { a: 1 }, { 'X-SCE-RequestId': 'bad id!' })).status).toBe(400);
    expect(
      (await submit('double', { a: 1 }, { 'X-SCE-CallbackUrl': receiver.url('/x'), 'X-SCE-CallbackRetryCount': '11' }))
        .status,
    ).toBe(400);
    expect(
      (
        await submit(
          'double',
          { a: 1 },
          { 'X-SCE-CallbackUrl': receiver.url('/x'), 'X-SCE-CallbackRetryDelay': '3601' },
        )
      ).status,
    ).toBe(400);
    expect((await submit('double', { a: 1 }, { 'X-SCE-CallbackUrl': 'ftp://127.0.0.1/x' })).status).toBe(400);
    expect((await fetchResult('double', 'bad id!')).status).toBe(400);
    expect((await request(t.app).post('/api/scenario/code/scoreasync/double').send({ a: 1 })).status).toBe(401);
    expect(
      (await request(t.app).get('/api/scenario/code/scoreasyncresult/double').set('X-SCE-RequestId', 'x')).status,
    ).toBe(401);
  });
});

describe('callbacks', () => {
  const attempts = (requestId: string) =>
    t.services
      .db('run_results as r')
      .join('callback_attempts as c', 'c.result_id', 'r.id')
      .where({ 'r.user_id': alice.id, 'r.request_id': requestId })
      .orderBy('c.id')
      .select('c.attempt', 'c.http_status', 'c.error');
  const callbackState = async (requestId: string) =>
    (
      (await t.services
        .db('run_results')
        .where({ user_id: alice.id, request_id: requestId })
        .first('callback_state')) as { callback_state: string }
    ).callback_state;

  it('POSTs the ScoreResult with a verifiable signature', async () => {
    receiver.answer(200);
    const requestId = randomUUID();
    await submit('double', { a: 3 }, { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': receiver.url('/hook') });
    const call = await waitFor(async () => receiver.received.find((c) => c.headers['x-sce-requestid'] === requestId));
    const body = JSON.parse(call.body);
    expect(body).toMatchObject({ runId: requestId, state: 'SUCCEEDED', result: { doubled: 6 } });
    expect(body).toEqual((await fetchResult('double', requestId)).body);
    const timestamp = call.headers['x-sce-timestamp'] as string;
    expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
    expect(
      verifyCallbackSignature(
        t.config.callbackSigningSecret,
        timestamp,
        call.body,
        call.headers['x-sce-signature'] as string,
      ),
    ).toBe(true);
    expect(
      verifyCallbackSignature('another secret', timestamp, call.body, call.headers['x-sce-signature'] as string),
    ).toBe(false);
    await waitFor(async () => ((await callbackState(requestId)) === 'DELIVERED' ? true : undefined));
    expect(await attempts(requestId)).toEqual([{ attempt: 1, http_status: 200, error: null }]);
  });

  it('retries after 500s and records every attempt', async () => {
    receiver.answer(500, 503, 200);
    const requestId = randomUUID();
    await submit(
      'double',
      { a: 3 },
      {
        'X-SCE-RequestId': requestId,
        'X-SCE-CallbackUrl': receiver.url('/flaky'),
        'X-SCE-CallbackRetryCount': '3',
        'X-SCE-CallbackRetryDelay': '0',
      },
    );
    await waitFor(async () => ((await callbackState(requestId)) === 'DELIVERED' ? true : undefined));
    expect((await attempts(requestId)).map((a) => [a.attempt, a.http_status])).toEqual([
      [1, 500],
      [2, 503],
      [3, 200],
    ]);
  });

  it('waits RetryDelay seconds between attempts', async () => {
    receiver.answer(500, 200);
    const requestId = randomUUID();
    await submit(
      'double',
      { a: 3 },
      {
        'X-SCE-RequestId': requestId,
        'X-SCE-CallbackUrl': receiver.url('/slow'),
        'X-SCE-CallbackRetryCount': '1',
        'X-SCE-CallbackRetryDelay': '1',
      },
    );
    await waitFor(async () => ((await callbackState(requestId)) === 'DELIVERED' ? true : undefined));
    const calls = receiver.received.filter((c) => c.headers['x-sce-requestid'] === requestId);
    expect(calls).toHaveLength(2);
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(950);
  });

  it('gives up after RetryCount retries and records the failure', async () => {
    receiver.answer(500);
    const requestId = randomUUID();
    await submit(
      'double',
      { a: 3 },
      {
        'X-SCE-RequestId': requestId,
        'X-SCE-CallbackUrl': receiver.url('/down'),
        'X-SCE-CallbackRetryCount': '2',
        'X-SCE-CallbackRetryDelay': '0',
      },
    );
    await waitFor(async () => ((await callbackState(requestId)) === 'FAILED' ? true : undefined));
    const recorded = await attempts(requestId);
    expect(recorded.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(recorded.every((a) => a.http_status === 500 && a.error === 'answered HTTP 500')).toBe(true);
  });

  it('does not follow redirects', async () => {
    receiver.answer(302);
    const requestId = randomUUID();
    await submit(
      'double',
      { a: 3 },
      { 'X-SCE-RequestId': requestId, 'X-SCE-CallbackUrl': receiver.url('/moved'), 'X-SCE-CallbackRetryCount': '0' },
    );
    await waitFor(async () => ((await callbackState(requestId)) === 'FAILED' ? true : undefined));
    expect(receiver.received.filter((c) => c.headers['x-sce-requestid'] === requestId)).toHaveLength(1);
  });

  it('answers 400 CALLBACK_REFUSED for private and metadata targets outside the allow-list, without sending anything', async () => {
    const loopbackPort = new URL(receiver.url('/')).port;
    for (const url of [
      'http://10.0.0.1/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/hook',
      'http://192.168.1.1/hook',
      // IPv6 forms embedding a loopback or private IPv4 address (127.0.0.1 itself is allow-listed in this app).
      `http://[::127.0.0.1]:${loopbackPort}/hook`,
      `http://[::ffff:0:127.0.0.1]:${loopbackPort}/hook`,
      `http://[64:ff9b::127.0.0.1]:${loopbackPort}/hook`,
      'http://[2002:a9fe:a9fe::]/hook',
    ]) {
      const response = await submit('double', { a: 1 }, { 'X-SCE-CallbackUrl': url });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('CALLBACK_REFUSED');
      expect(response.body.message).toContain('OUTBOUND_ALLOW_LIST');
    }
  });
});
