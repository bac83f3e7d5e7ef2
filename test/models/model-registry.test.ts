import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/** The model registry over HTTP, and a MODEL node scoring a registered model in a deployed scenario. */

const fixture = (name: string) => readFileSync(new URL(`./fixtures/${name}`, import.meta.url));
const LOGISTIC = fixture('logistic-binary.pmml');
const SCORECARD = fixture('scorecard-reasons.pmml');
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

const upload = (u: TestUser, name: string, file: Buffer | string, fileName = 'model.pmml') =>
  request(t.app)
    .post(`/api/models/${name}/versions`)
    .set(bearer(u))
    .attach('file', typeof file === 'string' ? Buffer.from(file) : file, fileName);

describe('model registry', () => {
  it('stores each upload as a new version and answers the fields read from the model', async () => {
    const name = uniqueModel('risk');
    const first = await upload(user, name, LOGISTIC);
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({
      name,
      version: 1,
      format: 'PMML',
      modelType: 'RegressionModel',
      functionName: 'classification',
      target: 'default',
      fileName: 'model.pmml',
      sizeBytes: LOGISTIC.length,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(first.body.inputs.map((i: { name: string }) => i.name)).toEqual([
      'age',
      'income',
      'debt_ratio',
      'months_employed',
      'employment',
    ]);
    expect(first.body.inputs[4]).toEqual({
      name: 'employment',
      dataType: 'string',
      optype: 'categorical',
      values: ['EMPLOYED', 'SELF_EMPLOYED', 'UNEMPLOYED'],
      invalidValueTreatment: 'returnInvalid',
    });
    expect(first.body.outputs).toEqual([
      { name: 'decision', feature: 'predictedValue' },
      { name: 'p_good', feature: 'probability', value: 'good' },
      { name: 'p_bad', feature: 'probability', value: 'bad' },
    ]);
    const second = await upload(user, name, LOGISTIC, 'again.xml');
    expect(second.body).toMatchObject({ version: 2, fileName: 'again.xml' });

    const listed = await request(t.app).get('/api/models').set(bearer(user));
    expect(listed.body.find((m: { name: string }) => m.name === name)).toMatchObject({
      name,
      latestVersion: 2,
      versions: [{ version: 2 }, { version: 1 }],
    });
    expect((await request(t.app).get(`/api/models/${name}`).set(bearer(user))).body).toMatchObject({
      name,
      latestVersion: 2,
    });
    expect((await request(t.app).get(`/api/models/${name}/versions/latest`).set(bearer(user))).body).toMatchObject({
      version: 2,
      inputs: first.body.inputs,
    });
    const file = await request(t.app).get(`/api/models/${name}/versions/1/file`).set(bearer(user));
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toMatch(/^application\/xml/);
    expect(file.text).toBe(LOGISTIC.toString('utf8'));
  });

  it('testModelVersion scores a version on sample input, as a MODEL node does, and stores nothing', async () => {
    const name = uniqueModel('tried');
    await upload(user, name, SCORECARD).expect(201);
    const tried = (version: string, body?: object, who = user) => {
      const call = request(t.app).post(`/api/models/${name}/versions/${version}/test`).set(bearer(who));
      return body === undefined ? call : call.send(body);
    };
    const scored = await tried('latest', { age: 34, housing: 'RENT', income: 52000 });
    expect(scored.status).toBe(200);
    expect(scored.body).toMatchObject({ name, version: 1, inputs: { age: 34, housing: 'RENT', income: 52000 } });
    expect(Object.keys(scored.body.outputs)).toEqual(['score', 'reason1', 'reason2', 'reason3']);
    expect(typeof scored.body.outputs.score).toBe('number');
    // The same as the version read by number; without a body every input is missing.
    expect((await tried('1', { age: 34, housing: 'RENT', income: 52000 })).body.outputs).toEqual(scored.body.outputs);
    const empty = await tried('1');
    expect([empty.status, empty.body.inputs]).toEqual([200, { age: null, housing: null, income: null }]);
    // A key that is no input of the model: 400 naming it.
    const typo = await tried('1', { agee: 34 });
    expect([typo.status, typo.body.code, typo.body.details[0].path]).toEqual([400, 'VALIDATION_FAILED', 'body.agee']);
    // Another user's model, an unknown version: 404.
    expect((await tried('1', {}, await t.newUser())).body.code).toBe('MODEL_NOT_FOUND');
    expect((await tried('9', {})).status).toBe(404);
    // No bearer: 401.
    expect((await request(t.app).post(`/api/models/${name}/versions/1/test`).send({})).status).toBe(401);
    // An invalid value under returnInvalid (income is a number): 422 naming the field.
    const invalid = await tried('1', { age: 34, housing: 'RENT', income: 'lots' });
    expect([invalid.status, invalid.body.code]).toEqual([422, 'RUN_FAILED']);
    expect(invalid.body.message).toContain('model input "income"');
  });

  it('keeps models per owner: another user gets 404 MODEL_NOT_FOUND', async () => {
    const name = uniqueModel('mine');
    await upload(user, name, LOGISTIC).expect(201);
    const other = await t.newUser();
    const answer = await request(t.app).get(`/api/models/${name}/versions/1`).set(bearer(other));
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({ code: 'MODEL_NOT_FOUND' });
    expect((await request(t.app).get(`/api/models/${name}/versions/7`).set(bearer(user))).body.code).toBe(
      'MODEL_NOT_FOUND',
    );
  });

  /** A regression on x whose TransformationDictionary derives a and b (a read by the model). */
  const derivedFields = (
    a: string,
    b: string,
  ) => `<PMML><DataDictionary><DataField name="x" optype="continuous" dataType="double"/></DataDictionary>
    <TransformationDictionary><DerivedField name="a" dataType="double" optype="continuous">${a}</DerivedField><DerivedField name="b" dataType="double" optype="continuous">${b}</DerivedField></TransformationDictionary>
    <RegressionModel functionName="regression"><MiningSchema><MiningField name="x"/></MiningSchema><RegressionTable intercept="1"><NumericPredictor name="a" coefficient="1"/></RegressionTable></RegressionModel></PMML>`;

  describe('refuses hostile and unusable files with a 4xx, storing nothing', () => {
    const name = uniqueModel('hostile');
    const stored = async () => (await request(t.app).get(`/api/models/${name}`).set(bearer(user))).status;

    it.each([
      [
        'an entity bomb',
        '<?xml version="1.0"?><!DOCTYPE b [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><PMML>&b;</PMML>',
        400,
        'MODEL_INVALID',
        /DOCTYPE/,
      ],
      [
        'an external entity',
        '<?xml version="1.0"?><!DOCTYPE p [<!ENTITY x SYSTEM "file:///etc/passwd">]><PMML>&x;</PMML>',
        400,
        'MODEL_INVALID',
        /DOCTYPE/,
      ],
      [
        'deep nesting',
        `<PMML>${'<Extension>'.repeat(1000)}${'</Extension>'.repeat(1000)}</PMML>`,
        400,
        'MODEL_INVALID',
        /deeper than 128/,
      ],
      ['text that is not XML', 'this is not xml', 400, 'MODEL_INVALID', /well-formed/],
      ['XML that is not PMML', '<model/>', 400, 'MODEL_INVALID', /PMML/],
      [
        'a model type this service does not run',
        '<PMML><DataDictionary/><NeuralNetwork functionName="regression"><MiningSchema/></NeuralNetwork></PMML>',
        422,
        'MODEL_NOT_SUPPORTED',
        /NeuralNetwork/,
      ],
      [
        'derived fields that depend on each other in a cycle',
        derivedFields(
          '<Apply function="+"><FieldRef field="b"/><FieldRef field="x"/></Apply>',
          '<FieldRef field="a"/>',
        ),
        400,
        'MODEL_INVALID',
        /DerivedField\[0\]: derived field "a" depends on itself \(a → b → a\)/,
      ],
      [
        'an expression element this service does not run',
        derivedFields('<Aggregate field="x" function="sum"/>', '<FieldRef field="x"/>'),
        422,
        'MODEL_NOT_SUPPORTED',
        /DerivedField\[0\]\.Aggregate: <Aggregate> is not supported/,
      ],
      [
        'a tree whose missing value strategy weighs children by record counts it does not have',
        '<PMML><DataDictionary><DataField name="x" optype="continuous" dataType="double"/><DataField name="c" optype="categorical" dataType="string"/></DataDictionary>' +
          '<TreeModel functionName="classification" missingValueStrategy="weightedConfidence"><MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema>' +
          '<Node><True/><Node id="low" recordCount="3"><SimplePredicate field="x" operator="lessThan" value="0"/><ScoreDistribution value="A" recordCount="3"/></Node>' +
          '<Node id="high"><True/><ScoreDistribution value="B" recordCount="2"/></Node></Node></TreeModel></PMML>',
        422,
        'MODEL_NOT_SUPPORTED',
        /Node\[1\]: missingValueStrategy="weightedConfidence" needs the recordCount of every Node but the root: Node "high" has none/,
      ],
      [
        'a classification averaging probabilities over a segment that may answer without them',
        '<PMML><DataDictionary><DataField name="x" optype="continuous" dataType="double"/><DataField name="c" optype="categorical" dataType="string"/></DataDictionary>' +
          '<MiningModel functionName="classification"><MiningSchema><MiningField name="x"/><MiningField name="c" usageType="target"/></MiningSchema><Segmentation multipleModelMethod="average">' +
          '<Segment id="forest-1"><True/><TreeModel functionName="classification"><MiningSchema><MiningField name="x"/></MiningSchema><Node><True/><ScoreDistribution value="A" recordCount="3"/><ScoreDistribution value="B" recordCount="1"/></Node></TreeModel></Segment>' +
          '<Segment id="forest-2"><True/><TreeModel functionName="classification"><MiningSchema><MiningField name="x"/></MiningSchema><Node><True/><Node id="leaf" score="B"><True/></Node></Node></TreeModel></Segment>' +
          '</Segmentation></MiningModel></PMML>',
        422,
        'MODEL_NOT_SUPPORTED',
        /Segment\[1\]: multipleModelMethod="average" combines the segments' probabilities: Segment "forest-2" can answer without them \(its TreeModel's Node\.Node\[0\] "leaf" has a score but no ScoreDistribution\)/,
      ],
    ])('%s', async (_label, body, status, code, message) => {
      const answer = await upload(user, name, body);
      expect(answer.status).toBe(status);
      expect(answer.body).toMatchObject({ status, code, message: expect.stringMatching(message) });
      expect(await stored()).toBe(404);
    });

    it('a file over MODEL_MAX_BYTES: 413', async () => {
      const big = `<PMML>${'<!-- padding -->'.repeat(MAX_BYTES / 8)}</PMML>`;
      const answer = await upload(user, name, big);
      expect(answer.status).toBe(413);
      expect(answer.body.code).toBe('PAYLOAD_TOO_LARGE');
      expect(await stored()).toBe(404);
    });

    it('a file that is not .pmml or .xml: 400 naming the file', async () => {
      const answer = await upload(user, name, LOGISTIC, 'model.bin');
      expect(answer.status).toBe(400);
      expect(answer.body).toMatchObject({ code: 'MODEL_INVALID', details: [{ path: 'body.file' }] });
      expect(await stored()).toBe(404);
    });
  });
});

describe('a MODEL node in a deployed scenario', () => {
  it('scores the registered model, follows `latest`, and keeps a version in use from deletion', async () => {
    const name = uniqueModel('card');
    await upload(user, name, SCORECARD).expect(201);
    const scenario = {
      name: `uses-${name}`,
      content: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'card', type: 'MODEL', prefix: 'card_' },
          { id: 'end', type: 'END' },
        ],
        edges: [
          { from: 'start', to: 'card' },
          { from: 'card', to: 'end' },
        ],
      },
      nodeProperties: {
        start: {
          content: {
            inputs: [
              { name: 'age', type: { type: 'DOUBLE' }, required: false },
              { name: 'home', type: { type: 'STRING' }, required: false },
              { name: 'income', type: { type: 'DOUBLE' }, required: false },
            ],
          },
        },
        card: {
          content: {
            model: name,
            inputs: { housing: 'home' },
            outputs: { score: 'score', reason1: 'reason', reason2: 'second' },
          },
        },
        end: { content: { outputs: ['card_score', 'card_reason', 'card_second'] } },
      },
    };
    const imported = await request(t.app)
      .post('/api/scenario/import')
      .query({ context: user.context(), overwrite_develop: true })
      .set(bearer(user))
      .send(scenario);
    expect(imported.status).toBe(200);
    const id = imported.body.scenarios[0].scenarioId;
    const deployed = await request(t.app)
      .post(`/api/scenario/deploy/${id}`)
      .query({ context: user.context() })
      .set(bearer(user));
    expect(deployed.status).toBe(204);
    const scored = await request(t.app)
      .post('/api/scenario/code/remote/score')
      .query({ name: scenario.name, key: user.scoreToken })
      .send({ age: 30, home: 'RENT', income: 1000 });
    expect(scored.body).toMatchObject({
      state: 'SUCCEEDED',
      result: { card_score: 530, card_reason: 'INCOME', card_second: 'HOUSING' },
    });

    // Version 1 is the newest and the deployed scenario uses `latest`: it cannot go.
    const refused = await request(t.app).delete(`/api/models/${name}/versions/1`).set(bearer(user));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'MODEL_IN_USE', message: expect.stringContaining(scenario.name) });

    // A second version takes over `latest`; version 1 is then free to delete.
    await upload(user, name, SCORECARD).expect(201);
    expect((await request(t.app).delete(`/api/models/${name}/versions/1`).set(bearer(user))).status).toBe(204);
    expect((await request(t.app).delete(`/api/models/${name}/versions/2`).set(bearer(user))).status).toBe(409);
  });

  it('refuses to deploy a scenario whose model does not exist, naming the node', async () => {
    const scenario = {
      name: uniqueModel('dangling'),
      content: {
        nodes: [
          { id: 'start', type: 'START' },
          { id: 'm', type: 'MODEL' },
          { id: 'end', type: 'END' },
        ],
        edges: [
          { from: 'start', to: 'm' },
          { from: 'm', to: 'end' },
        ],
      },
      nodeProperties: {
        start: { content: { inputs: [] } },
        m: { content: { model: 'no-such-model', version: 3, outputs: { score: 'score' } } },
      },
    };
    const imported = await request(t.app)
      .post('/api/scenario/import')
      .query({ context: user.context(), overwrite_develop: true })
      .set(bearer(user))
      .send(scenario);
    const deployed = await request(t.app)
      .post(`/api/scenario/deploy/${imported.body.scenarios[0].scenarioId}`)
      .query({ context: user.context() })
      .set(bearer(user));
    expect(deployed.status).toBe(422);
    expect(deployed.body.details).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ code: 'MODEL_NOT_FOUND', path: 'nodeProperties.m.content.model' }),
      ]),
    );
  });
});
