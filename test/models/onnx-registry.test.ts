import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { ChildProcessOnnxInspector } from '../../src/models/onnx-inspector.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * ONNX models in the registry, end to end: upload (the file loaded by ONNX Runtime in a child process), a scenario
 * whose MODEL node uses it, deployed and scored over HTTP; every row as onnxruntime in Python scored it (relative
 * 1e-6; fixtures from scripts/fixtures/make-onnx-models.py). Hostile files: 4xx, nothing stored.
 */

const FIXTURES = new URL('./fixtures/onnx/', import.meta.url);
const fixture = (name: string) => readFileSync(new URL(name, FIXTURES));
const MAX_BYTES = 64 * 1024;

let t: TestApp;
let user: TestUser;
const bearer = (u: TestUser) => ({ Authorization: `Bearer ${u.accessToken}` });
let counter = 0;
const uniqueModel = (prefix: string) => `${prefix}-${Date.now().toString(36)}-${++counter}`;

beforeAll(async () => {
  t = await createTestApp({ configOverrides: { models: { maxBytes: MAX_BYTES } } });
  user = await t.newUser();
});
afterAll(() => t.close());

const upload = (name: string, file: Buffer, fileName = 'model.onnx') =>
  request(t.app).post(`/api/models/${name}/versions`).set(bearer(user)).attach('file', file, fileName);

interface Expected {
  outputs: string[];
  rows: { inputs: Record<string, unknown>; onnxruntime: Record<string, unknown> }[];
}

function close(actual: unknown, expected: unknown): boolean {
  if (Array.isArray(expected))
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, k) => close(actual[k], e));
  if (typeof expected === 'number')
    return typeof actual === 'number' && Math.abs(actual - expected) <= 1e-6 * Math.max(1, Math.abs(expected));
  return actual === expected;
}

/** Imports and deploys START (row: MAP) → SCRIPT (builds the model inputs) → MODEL → END. */
async function deployScenario(model: string, inputs: string[], build: string, outputs: string[]): Promise<string> {
  const scenario = {
    name: `uses-${model}`,
    content: {
      nodes: [
        { id: 'start', type: 'START' },
        { id: 'build', type: 'SCRIPT' },
        { id: 'm', type: 'MODEL', prefix: 'm_' },
        { id: 'end', type: 'END' },
      ],
      edges: [
        { from: 'start', to: 'build' },
        { from: 'build', to: 'm' },
        { from: 'm', to: 'end' },
      ],
    },
    nodeProperties: {
      start: { content: { inputs: [{ name: 'row', type: { type: 'MAP' }, required: true }] } },
      build: { content: { language: 'javascript', code: build, outputs: inputs } },
      m: { content: { model, outputs: Object.fromEntries(outputs.map((o) => [o, o])) } },
      end: { content: { outputs: outputs.map((o) => `m_${o}`) } },
    },
  };
  const imported = await request(t.app)
    .post('/api/scenario/import')
    .query({ context: user.context(), overwrite_develop: true })
    .set(bearer(user))
    .send(scenario);
  expect(imported.status).toBe(200);
  const deployed = await request(t.app)
    .post(`/api/scenario/deploy/${imported.body.scenarios[0].scenarioId}`)
    .query({ context: user.context() })
    .set(bearer(user));
  expect(deployed.body).toEqual({});
  expect(deployed.status).toBe(204);
  return scenario.name;
}

const FEATURES = 'X = [row.age, row.income, row.debt_ratio, row.months_employed];';

describe('ONNX models in the registry', () => {
  it('reads inputs and outputs from the graph, and gives the file back as bytes', async () => {
    const name = uniqueModel('classifier');
    const bytes = fixture('tree-classifier.onnx');
    const answer = await upload(name, bytes);
    expect(answer.status).toBe(201);
    expect(answer.body).toMatchObject({
      name,
      version: 1,
      format: 'ONNX',
      modelType: 'ONNX',
      functionName: 'classification',
      fileName: 'model.onnx',
      sizeBytes: bytes.length,
    });
    expect(answer.body.inputs).toEqual([
      {
        name: 'X',
        dataType: 'float',
        optype: 'continuous',
        invalidValueTreatment: 'returnInvalid',
        tensor: { elementType: 'float32', shape: ['N', 4] },
      },
    ]);
    expect(answer.body.outputs).toEqual([
      { name: 'label', feature: 'predictedValue', tensor: { elementType: 'int64', shape: ['N'] } },
      { name: 'probabilities', feature: 'probability', tensor: { elementType: 'float32', shape: ['N', 2] } },
    ]);
    const file = await request(t.app)
      .get(`/api/models/${name}/versions/1/file`)
      .set(bearer(user))
      .buffer(true)
      .parse((res, done) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('application/octet-stream');
    expect(Buffer.compare(file.body as Buffer, bytes)).toBe(0);
  });

  it.each([
    ['linear', ['X'], FEATURES],
    ['mlp', ['X'], FEATURES],
    ['tree-classifier', ['X'], FEATURES],
    ['gbm-100', ['X'], FEATURES],
    ['typed-inputs', ['employment', 'months'], 'employment = row.employment; months = row.months;'],
  ])('%s: upload, deploy, score: every row as onnxruntime scored it (1e-6)', async (fixtureName, inputs, build) => {
    const name = uniqueModel(fixtureName);
    expect((await upload(name, fixture(`${fixtureName}.onnx`))).status).toBe(201);
    const { outputs, rows } = JSON.parse(fixture(`${fixtureName}.expected.json`).toString('utf8')) as Expected;
    const scenario = await deployScenario(name, inputs as string[], build as string, outputs);
    const problems: string[] = [];
    for (let k = 0; k < rows.length; k++) {
      const scored = await request(t.app)
        .post('/api/scenario/code/remote/score')
        .query({ name: scenario, key: user.scoreToken })
        .send({ row: rows[k].inputs });
      if (scored.body.state !== 'SUCCEEDED') {
        problems.push(`row ${k}: ${JSON.stringify(scored.body)}`);
        continue;
      }
      for (const output of outputs) {
        const got = scored.body.result[`m_${output}`];
        if (!close(got, rows[k].onnxruntime[output]))
          problems.push(
            `row ${k}, ${output}: expected ${JSON.stringify(rows[k].onnxruntime[output])}, got ${JSON.stringify(got)}`,
          );
      }
    }
    expect(problems.slice(0, 10)).toEqual([]);
  });

  it('fails a run whose input does not fit the tensor: MODEL_INPUT_INVALID naming the input', async () => {
    const name = uniqueModel('linear');
    expect((await upload(name, fixture('linear.onnx'))).status).toBe(201);
    const scenario = await deployScenario(name, ['X'], 'X = row.x;', ['limit']);
    const score = (x: unknown) =>
      request(t.app)
        .post('/api/scenario/code/remote/score')
        .query({ name: scenario, key: user.scoreToken })
        .send({ row: { x } });
    const short = await score([1, 2, 3]);
    expect(short.status).toBe(422);
    expect(short.body.details).toEqual([
      expect.objectContaining({
        code: 'MODEL_INPUT_INVALID',
        nodeId: 'm',
        message: expect.stringContaining(
          'model input "X" of node \'m\' is invalid: an array of 3 (4 values per row expected',
        ),
      }),
    ]);
    const text = await score([1, 2, 'three', 4]);
    expect(text.body.details).toEqual([
      expect.objectContaining({
        code: 'MODEL_INPUT_INVALID',
        message: expect.stringContaining('a number is expected'),
      }),
    ]);
    expect(
      (
        await score([
          [30, 50000],
          [0.5, 12],
        ])
      ).body,
    ).toMatchObject({ state: 'SUCCEEDED' });
  });

  describe('refuses hostile and unusable files with a 4xx, storing nothing', () => {
    const name = uniqueModel('hostile');
    const stored = async () => (await request(t.app).get(`/api/models/${name}`).set(bearer(user))).status;
    const gbm = fixture('gbm-100.onnx');

    it.each([
      ['a truncated file', gbm.subarray(0, Math.floor(gbm.length / 2)), 400, 'MODEL_INVALID'],
      ['random bytes', randomBytes(4096), 400, 'MODEL_INVALID'],
      ['an empty file', Buffer.alloc(0), 400, 'MODEL_INVALID'],
      ['an operator ONNX Runtime does not have', fixture('hostile-unknown-operator.onnx'), 422, 'MODEL_NOT_SUPPORTED'],
      ['an opset ONNX Runtime does not have', fixture('hostile-future-opset.onnx'), 422, 'MODEL_NOT_SUPPORTED'],
      ['a file over MODEL_MAX_BYTES', randomBytes(MAX_BYTES + 1), 413, 'PAYLOAD_TOO_LARGE'],
    ])('%s', async (_label, file, status, code) => {
      const answer = await upload(name, file);
      expect(answer.body).toMatchObject({ status, code });
      expect(answer.status).toBe(status);
      expect(await stored()).toBe(404);
    });
  });
});

describe('ChildProcessOnnxInspector', () => {
  it('refuses a file that takes longer than its time limit to load (the child is killed)', async () => {
    const answer = await new ChildProcessOnnxInspector(1).inspect(fileURLToPath(new URL('gbm-100.onnx', FIXTURES)));
    expect(answer).toEqual({
      refused: { kind: 'invalid', message: expect.stringMatching(/did not load the file within 1 ms/), path: 'file' },
    });
  });

  it('refuses a file that is not there, without throwing', async () => {
    const answer = await new ChildProcessOnnxInspector(20_000).inspect('/nonexistent/model.onnx');
    expect(answer).toMatchObject({ refused: { kind: 'invalid' } });
  });
});
