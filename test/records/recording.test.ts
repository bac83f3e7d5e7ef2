import { createHmac, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario, shoutingScenario } from '../support/scenario-fixtures.js';
import { chain, input, script } from '../engine/support/scenario-builder.js';
import { isolateJobStore, waitFor } from '../execution/support.js';
import { upload } from '../internal-data/support/collections.js';
import { bearer, getRecord, putSettings, recordsOf, scenarioIdOf } from './support.js';

/** Every run is recorded: sync (sampled), async and batch, not debug; pii inputs masked; lookups and HTTP calls captured. */

let t: TestApp;
let alice: TestUser;
let bureau: http.Server;
let bureauUrl: string;
let doubleId: string;

beforeAll(async () => {
  isolateJobStore('records');
  t = await createTestApp({ configOverrides: { outboundAllowList: ['127.0.0.1'] } });
  await t.services.execution.startWorker();
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'double', doublingScenario());
  doubleId = await scenarioIdOf(t, alice.id, 'double');
  bureau = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ path: req.url, score: 640 }));
  });
  await new Promise<void>((resolve) => bureau.listen(0, '127.0.0.1', resolve));
  bureauUrl = `http://127.0.0.1:${(bureau.address() as AddressInfo).port}`;
});
afterAll(async () => {
  bureau.closeAllConnections();
  await new Promise((resolve) => bureau.close(resolve));
  await t.close();
});

const score = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  request(t.app)
    .post('/api/scenario/code/remote/score')
    .query({ name })
    .set('Score-Token', alice.scoreToken)
    .set(headers)
    .send(body as object);

async function newScenario(name: string, doc = doublingScenario()): Promise<string> {
  await deployScenario(t.services.db, alice.id, name, doc);
  return scenarioIdOf(t, alice.id, name);
}

describe('synchronous runs', () => {
  it('are recorded with scenario, version, requester, request id, inputs, result and timings; the record id is the run id', async () => {
    const requestId = `req-${randomUUID()}`;
    const response = await score('double', { a: 21 }, { 'X-Request-Id': requestId });
    expect(response.status).toBe(200);
    const [record] = await recordsOf(t, alice, doubleId, { requestId });
    expect(record).toMatchObject({
      id: response.body.runId,
      scenarioId: doubleId,
      scenarioName: 'double',
      version: '1',
      mode: 'SYNC',
      requesterId: String(alice.id),
      requestId,
      batchId: null,
      state: 'SUCCEEDED',
      inputs: { a: 21 },
      maskedInputs: [],
      result: { doubled: 42 },
      error: null,
      hasTrace: false,
      captureCount: 0,
    });
    expect(record.durationMicros).toBeGreaterThan(0);
    expect(Date.parse(record.endedAt)).toBeGreaterThanOrEqual(Date.parse(record.beganAt));
    const full = await getRecord(t, alice, doubleId, record.id);
    expect(full.status).toBe(200);
    expect(full.body).toMatchObject({ id: record.id, trace: null, captures: [] });
  });

  it('are recorded when they fail: the run error, and bad inputs as INVALID_INPUT', async () => {
    const failed = await score('double', { a: 13 }, { 'X-Request-Id': 'sync-fails-13' });
    expect(failed.status).toBe(422);
    const invalid = await score('double', { a: 'x' }, { 'X-Request-Id': 'sync-invalid-x' });
    expect(invalid.status).toBe(400);
    const [runError] = await recordsOf(t, alice, doubleId, { requestId: 'sync-fails-13' });
    expect(runError).toMatchObject({
      state: 'FAILED',
      result: null,
      error: { code: 'SCRIPT_ERROR', nodeId: 'explode', message: expect.stringContaining('unlucky thirteen') },
    });
    const [badInput] = await recordsOf(t, alice, doubleId, { requestId: 'sync-invalid-x' });
    expect(badInput).toMatchObject({
      state: 'FAILED',
      inputs: { a: 'x' },
      error: { code: 'INVALID_INPUT', violations: [expect.objectContaining({ variable: 'a' })] },
    });
  });

  it("are sampled at the scenario's syncSampleRate (0: none, 1: all)", async () => {
    const id = await newScenario('sampled');
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 0, trace: false }).expect(200);
    for (let k = 0; k < 5; k += 1) expect((await score('sampled', { a: k })).status).toBe(200);
    expect(await recordsOf(t, alice, id)).toEqual([]);
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: false }).expect(200);
    for (let k = 0; k < 5; k += 1) expect((await score('sampled', { a: k })).status).toBe(200);
    expect(await recordsOf(t, alice, id)).toHaveLength(5);
  });

  it('record about the share of runs the rate asks for', async () => {
    const id = await newScenario('half');
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 0.5, trace: false }).expect(
      200,
    );
    for (let k = 0; k < 200; k += 1) await score('half', { a: k });
    const recorded = (await recordsOf(t, alice, id)).length;
    // Binomial(200, 0.5): outside 60..140 once in about 10^8 runs.
    expect(recorded).toBeGreaterThan(60);
    expect(recorded).toBeLessThan(140);
  });

  it('are not recorded for an unknown scenario (there is none to file them under)', async () => {
    const recorded = async () =>
      Number(
        (
          (await t.services
            .db('decision_record_pages')
            .where({ owner_id: alice.id })
            .sum({ n: 'records' })
            .first()) as { n: number | string | null }
        ).n ?? 0,
      );
    const before = await recorded();
    expect((await score('no-such-scenario', { a: 1 })).status).toBe(404);
    await t.services.records.recorder.flush();
    expect(await recorded()).toBe(before);
  });
});

describe('asynchronous runs', () => {
  it('are recorded by the worker, under their X-SCE-RequestId, also when sync runs are not sampled', async () => {
    const id = await newScenario('async-recorded');
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 0, trace: false }).expect(200);
    const requestId = `async-${randomUUID()}`;
    await request(t.app)
      .post('/api/scenario/code/scoreasync/async-recorded')
      .set('Score-Token', alice.scoreToken)
      .set('X-SCE-RequestId', requestId)
      .send({ a: 5 })
      .expect(202);
    await waitFor(async () => {
      const response = await request(t.app)
        .get('/api/scenario/code/scoreasyncresult/async-recorded')
        .set('Score-Token', alice.scoreToken)
        .set('X-SCE-RequestId', requestId);
      return response.status === 200 ? response : undefined;
    });
    const runId = ((await t.services.db('run_results').where({ request_id: requestId }).first('id')) as { id: string })
      .id;
    const records = await waitFor(async () => {
      const found = await recordsOf(t, alice, id);
      return found.length > 0 ? found : undefined;
    });
    expect(records).toEqual([
      expect.objectContaining({
        id: runId,
        mode: 'ASYNC',
        requestId,
        requesterId: String(alice.id),
        state: 'SUCCEEDED',
        inputs: { a: 5 },
        result: { doubled: 10 },
      }),
    ]);
  });
});

describe('batch elements', () => {
  it('are each recorded under their result id, with the batch id', async () => {
    const id = await newScenario('batch-recorded');
    const submitted = await request(t.app)
      .post('/api/batch/score')
      .set('Score-Token', alice.scoreToken)
      .send({ scenarioName: 'batch-recorded', parameters: [{ a: 1 }, { a: 13 }, { a: 3 }] })
      .expect(202);
    const { batchTaskId } = submitted.body;
    const status = await waitFor(async () => {
      const response = await request(t.app).get(`/api/batch/${batchTaskId}`).set('Score-Token', alice.scoreToken);
      return response.body.state === 'FINISHED' ? response.body : undefined;
    });
    const records = await waitFor(async () => {
      const found = await recordsOf(t, alice, id);
      return found.length === 3 ? found : undefined;
    });
    expect(records.map((r) => r.id).sort()).toEqual([...status.resultsIds].sort());
    for (const record of records)
      expect(record).toMatchObject({ mode: 'BATCH', batchId: batchTaskId, requestId: record.id });
    const failed = records.find((r) => r.state === 'FAILED');
    expect(failed).toMatchObject({ inputs: { a: 13 }, error: { code: 'SCRIPT_ERROR' } });
  });
});

describe('what is not recorded', () => {
  it('debug runs', async () => {
    const id = await newScenario('debugged');
    const debug = await request(t.app).post(`/api/scenario/debug/${id}`).set(bearer(alice)).send({ a: 2 });
    expect(debug.status).toBe(200);
    expect(await recordsOf(t, alice, id)).toEqual([]);
  });

  it('any run of a scenario whose recording is disabled', async () => {
    const id = await newScenario('disabled');
    await putSettings(t, alice, id, { enabled: false, retentionDays: 30, syncSampleRate: 1, trace: true }).expect(200);
    expect((await score('disabled', { a: 1 })).status).toBe(200);
    await request(t.app)
      .post('/api/batch/score')
      .set('Score-Token', alice.scoreToken)
      .send({ scenarioName: 'disabled', parameters: [{ a: 1 }] })
      .expect(202);
    await waitFor(async () =>
      (await t.services
        .db('batches')
        .where({ user_id: alice.id, scenario_name: 'disabled' })
        .whereNotNull('finished_at')
        .first())
        ? true
        : undefined,
    );
    expect(await recordsOf(t, alice, id)).toEqual([]);
  });
});

describe('traces', () => {
  it('are kept when the settings ask for them', async () => {
    const id = await newScenario('traced');
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: true }).expect(200);
    await score('traced', { a: 2 }).expect(200);
    const [summary] = await recordsOf(t, alice, id);
    expect(summary.hasTrace).toBe(true);
    const { body } = await getRecord(t, alice, id, summary.id);
    expect(body.trace.map((entry: { nodeId: string }) => entry.nodeId)).toEqual(
      expect.arrayContaining(['explode', 'double']),
    );
  });
});

describe('pii inputs', () => {
  const secret = () => t.config.records.maskingSecret;
  const mask = (value: unknown) =>
    `pii:${createHmac('sha256', secret()).update(JSON.stringify(value)).digest('hex').slice(0, 32)}`;
  const applicant = chain(
    [
      input('ssn', 'STRING', true, {}),
      input('income', 'INTEGER'),
      input('age', 'INTEGER'),
      input('note', 'STRING', false),
    ].map((variable, k) =>
      k === 0 ? { ...variable, tags: ['PII', 'id'] } : k === 1 ? { ...variable, tags: ['pii'] } : variable,
    ),
    [script('band', 'band = income > 1000 ? "high" : "low";', ['band'])],
    { outputs: ['band'] },
  );

  it('are stored masked with a keyed hash (tag matched in any case), equal values alike, in the trace too', async () => {
    const id = await newScenario('applicant', applicant);
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: true }).expect(200);
    await score('applicant', { ssn: '123-45-6789', income: 5000, age: 41 }).expect(200);
    await score('applicant', { ssn: '123-45-6789', income: 700, age: 19 }).expect(200);
    const [second, first] = await recordsOf(t, alice, id);
    expect(first).toMatchObject({
      inputs: { ssn: mask('123-45-6789'), income: mask(5000), age: 41 },
      maskedInputs: ['ssn', 'income'],
      result: { band: 'high' },
    });
    expect(second.inputs.ssn).toBe(first.inputs.ssn);
    expect(second.inputs.income).not.toBe(first.inputs.income);
    const { body } = await getRecord(t, alice, id, first.id);
    const text = JSON.stringify(body);
    expect(text).not.toContain('123-45-6789');
    // As a JSON value, not as any four characters: ids and masks are hex, and may hold '5000' by chance.
    expect(text).not.toMatch(/[:[,]5000[,\]}]|"5000"/);
    // Masks are searchable: equal values give equal masks.
    expect((await recordsOf(t, alice, id, { requestId: first.requestId }))[0].inputs.ssn).toBe(mask('123-45-6789'));
  });

  it("never stores a pii input's value through an error message: the input check names its type only", async () => {
    const id = await scenarioIdOf(t, alice.id, 'applicant');
    const response = await score('applicant', { ssn: 987654321, income: 'x-secret-income', age: 'forty-one' }).expect(
      400,
    );
    const answered = JSON.stringify(response.body);
    expect(answered).not.toContain('987654321');
    expect(answered).not.toContain('x-secret-income');
    // A value not tagged pii is still quoted, as before.
    expect(answered).toContain('forty-one');
    const [record] = await recordsOf(t, alice, id, { requestId: response.body.requestId });
    expect(record.state).toBe('FAILED');
    expect(record.error.message).toMatch(
      /ssn: must be a string, got a number \(value not shown: the input is tagged pii\)/,
    );
    const stored = JSON.stringify(await getRecord(t, alice, id, record.id).then((full) => full.body));
    expect(stored).not.toContain('987654321');
    expect(stored).not.toContain('x-secret-income');
  });

  it("masks a pii value wherever the trace holds it: a called scenario's inputs, a copy under another name", async () => {
    await newScenario('shout-callee', shoutingScenario());
    const id = await newScenario(
      'applicant-caller',
      chain(
        [{ ...input('ssn', 'STRING'), tags: ['pii'] }, input('a', 'INTEGER')],
        [
          script('copy', 'copied = ssn;', ['copied']),
          {
            id: 'sub',
            type: 'SCENARIO_CALL',
            settings: { scenario: 'shout-callee', inputs: { text: 'ssn' }, outputVariable: 'called' },
          },
        ],
        { outputs: ['a'] },
      ),
    );
    await putSettings(t, alice, id, { enabled: true, retentionDays: 30, syncSampleRate: 1, trace: true }).expect(200);
    await score('applicant-caller', { ssn: '555-12-3456', a: 2 }).expect(200);
    const [summary] = await recordsOf(t, alice, id);
    const { body } = await getRecord(t, alice, id, summary.id);
    expect(JSON.stringify(body)).not.toContain('555-12-3456');
    const call = body.trace.find((entry: { nodeId: string }) => entry.nodeId === 'sub');
    expect(call.read.inputs.text).toBe(mask('555-12-3456'));
    const copy = body.trace.find((entry: { nodeId: string }) => entry.nodeId === 'copy');
    expect(copy.wrote.copied).toBe(mask('555-12-3456'));
    // Short values are masked under their name only: `a` (2) is left as it was, and the result is not masked (docs/records.md).
    expect(body.inputs.a).toBe(2);
    expect(body.result).toEqual({ a: 2 });
  });

  it.each([
    [
      "V8's 10-character snippet of a text it could not parse",
      'parsed = JSON.parse(email);',
      ['jane.doe@e', 'e@example.'],
    ],
    [
      "an upper-cased copy in a script's own error",
      'throw new Error("no account for " + email.toUpperCase());',
      ['JANE.DOE@EXAMPLE.COM'],
    ],
    [
      'the value without its separators',
      'throw new Error("id " + email.replace(/[^a-z0-9]/g, ""));',
      ['janedoeexamplecom'],
    ],
  ])("stores no pii value in an async run's error, nor in its record: %s", async (_what, code, forms) => {
    const name = `pii-error-${randomUUID().slice(0, 8)}`;
    const id = await newScenario(
      name,
      chain([{ ...input('email', 'STRING'), tags: ['pii'] }], [script('parse', code, ['parsed'])], {
        outputs: ['parsed'],
      }),
    );
    const requestId = `pii-${randomUUID()}`;
    await request(t.app)
      .post(`/api/scenario/code/scoreasync/${name}`)
      .set('Score-Token', alice.scoreToken)
      .set('X-SCE-RequestId', requestId)
      .send({ email: 'jane.doe@example.com' })
      .expect(202);
    const answer = await waitFor(async () => {
      const response = await request(t.app)
        .get(`/api/scenario/code/scoreasyncresult/${name}`)
        .set('Score-Token', alice.scoreToken)
        .set('X-SCE-RequestId', requestId);
      return response.status === 200 ? response : undefined;
    });
    expect(answer.body.state).toBe('FAILED');
    const stored = (await t.services
      .db('run_results')
      .where({ user_id: alice.id, request_id: requestId })
      .first('error_message', 'error_details', 'input')) as Record<string, string | null>;
    const [summary] = await waitFor(async () => {
      const found = await recordsOf(t, alice, id, { requestId });
      return found.length > 0 ? found : undefined;
    });
    const record = JSON.stringify((await getRecord(t, alice, id, summary.id)).body);
    for (const text of [JSON.stringify(answer.body), JSON.stringify(stored), record]) {
      expect(text).not.toContain('jane.doe@example.com');
      for (const form of forms) expect(text).not.toContain(form);
    }
    expect(stored.error_message).toContain('pii:');
  });

  it('leaves an absent pii input absent', async () => {
    await score('applicant', { ssn: 'x', income: 1, age: 1 }).expect(200);
    const id = await scenarioIdOf(t, alice.id, 'applicant');
    const [latest] = await recordsOf(t, alice, id);
    expect(Object.keys(latest.inputs).sort()).toEqual(['age', 'income', 'ssn']);
  });
});

describe('lookups and HTTP calls', () => {
  it('are captured in call order with node, call path and attempt, called scenarios included', async () => {
    const collection = `rec_${Date.now().toString(36)}`;
    await upload(t, alice, collection, 'id;tier\n1;GOLD\n2;SILVER\n', { indexes: 'id,true' }).expect(201);
    await newScenario(
      'bureau-check',
      chain(
        [input('id', 'INTEGER')],
        [
          {
            id: 'ask',
            type: 'HTTP_CALL',
            settings: { method: 'GET', url: `${bureauUrl}/inner/{{id}}`, output: 'inner' },
          },
        ],
        { outputs: ['inner'] },
      ),
    );
    const id = await newScenario(
      'external',
      chain(
        [input('id', 'INTEGER')],
        [
          {
            id: 'customer',
            type: 'DATA_LOOKUP',
            settings: { collection, keyColumn: 'id', joinVariable: 'id', mode: 'ONE', output: 'customer' },
          },
          {
            id: 'bureau',
            type: 'HTTP_CALL',
            settings: {
              method: 'POST',
              url: `${bureauUrl}/score`,
              body: { id: '{{id}}' },
              headers: { Authorization: 'Bearer secret-of-the-bureau' },
              output: 'bureau',
            },
          },
          {
            id: 'sub',
            type: 'SCENARIO_CALL',
            settings: { scenario: 'bureau-check', inputs: { id: 'id' }, outputVariable: 'checked' },
          },
        ],
        { outputs: ['customer', 'bureau', 'checked'] },
      ),
    );
    await score('external', { id: 2 }).expect(200);
    const [summary] = await recordsOf(t, alice, id);
    expect(summary.captureCount).toBe(3);
    const { body } = await getRecord(t, alice, id, summary.id);
    expect(body.captures).toEqual([
      {
        seq: 0,
        kind: 'DATA_LOOKUP',
        nodeId: 'customer',
        callPath: [],
        attempt: 1,
        request: { collection, keyColumn: 'id', key: 2, mode: 'ONE' },
        rows: { id: 2, tier: 'SILVER' },
      },
      {
        seq: 1,
        kind: 'HTTP_CALL',
        nodeId: 'bureau',
        callPath: [],
        attempt: 1,
        request: { method: 'POST', url: `${bureauUrl}/score`, body: { id: 2 } },
        response: { status: 200, body: { path: '/score', score: 640 } },
      },
      {
        seq: 2,
        kind: 'HTTP_CALL',
        nodeId: 'ask',
        callPath: ['sub'],
        attempt: 1,
        request: { method: 'GET', url: `${bureauUrl}/inner/2` },
        response: { status: 200, body: { path: '/inner/2', score: 640 } },
      },
    ]);
    expect(JSON.stringify(body)).not.toContain('secret-of-the-bureau');
  });

  it('keep a call that failed without an answer', async () => {
    const id = await newScenario(
      'unreachable',
      chain(
        [input('id', 'INTEGER')],
        [
          {
            id: 'down',
            type: 'HTTP_CALL',
            settings: {
              method: 'GET',
              url: 'http://127.0.0.1:1/nothing',
              timeoutMs: 500,
              catchErrors: true,
              errorOutput: 'problem',
              output: 'answer',
            },
          },
        ],
      ),
    );
    await score('unreachable', { id: 1 }).expect(200);
    const [summary] = await recordsOf(t, alice, id);
    const { body } = await getRecord(t, alice, id, summary.id);
    expect(body.captures).toEqual([
      expect.objectContaining({
        kind: 'HTTP_CALL',
        nodeId: 'down',
        attempt: 1,
        failure: { message: expect.stringContaining('ECONNREFUSED') },
      }),
    ]);
    expect(body.captures[0]).not.toHaveProperty('response');
  });
});
