import jwt from 'jsonwebtoken';
import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { createLegacyDatabase, type LegacyDatabase } from '../support/legacy-database.js';
import { allRows, upload } from '../internal-data/support/collections.js';
import { bearer, importAs, simpleScenario } from '../scenarios/support/fixtures.js';

/**
 * Usernames, scenario names and collection names are case-sensitive, on a database made by
 * `npm run migrate` and on one an operator created beforehand with a case-insensitive collation
 * (fixed by migration 20261123000102); names with surrounding whitespace are refused with 400.
 */
describe.each([
  ['a database created by npm run migrate', undefined],
  ['a database an operator created with utf8mb4_general_ci', 'utf8mb4_general_ci'],
])('names on %s', (_label, collation) => {
  let legacy: LegacyDatabase | undefined;
  let testApp: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    legacy = collation ? await createLegacyDatabase('names_ci', collation) : undefined;
    testApp = await createTestApp({ configOverrides: legacy ? { databaseUrl: legacy.url } : {} });
    alice = await testApp.newUser({ prefix: 'alice' });
  });
  afterAll(async () => {
    await testApp.close();
    await legacy?.drop();
  });

  it('a token for ALICE does not act as alice', async () => {
    expect((await upload(testApp, alice, 'mine', 'id\n1\n')).status).toBe(201);
    const shouting = jwt.sign(
      { preferred_username: alice.username.toUpperCase() },
      testApp.config.jwt.secret as string,
      { algorithm: 'HS256', expiresIn: 60 },
    );
    const listed = await request(testApp.app)
      .get('/api/internaldata/collections')
      .set('Authorization', `Bearer ${shouting}`);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([]);
    const other = await testApp.services.users.findByUsername(alice.username.toUpperCase());
    expect(other).toMatchObject({ username: alice.username.toUpperCase() });
    expect(other?.id).not.toBe(alice.id);
  });

  it('importing CREDIT-DECISION creates a scenario beside credit-decision', async () => {
    const [lower] = await importAs(testApp, alice, simpleScenario('credit-decision'));
    const [upper] = await importAs(testApp, alice, simpleScenario('CREDIT-DECISION'), { overwrite_develop: true });
    expect(upper).toMatchObject({ name: 'CREDIT-DECISION', outcome: 'CREATED' });
    expect(upper.scenarioId).not.toBe(lower.scenarioId);
  });

  it('a CSV loaded into Customers makes a collection beside customers', async () => {
    expect((await upload(testApp, alice, 'customers', 'id,name\n1,ann\n')).status).toBe(201);
    expect((await upload(testApp, alice, 'Customers', 'id,name\n2,bo\n')).status).toBe(201);
    expect(await allRows(testApp, alice, 'customers')).toEqual([expect.objectContaining({ id: 1, name: 'ann' })]);
    expect(await allRows(testApp, alice, 'Customers')).toEqual([expect.objectContaining({ id: 2, name: 'bo' })]);
  });

  describe('surrounding whitespace is refused with 400 naming the field', () => {
    const expect400 = (response: request.Response, path: string) => {
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.details).toContainEqual(expect.objectContaining({ path }));
    };
    const management = (method: 'get' | 'post', path: string) =>
      request(testApp.app)[method](path).query({ context: alice.context() }).set(bearer(alice));

    it('in an imported scenario name', async () => {
      const response = await management('post', '/api/scenario/import').send(
        simpleScenario('credit-decision ') as object,
      );
      expect400(response, 'body.name');
    });

    it('in the new name of a rename or a copy', async () => {
      const [{ scenarioId }] = await importAs(testApp, alice, simpleScenario('to-rename'));
      expect400(
        await management('post', `/api/scenario/rename/to-rename/${encodeURIComponent('renamed ')}`),
        'params.newName',
      );
      expect400(
        await management('post', `/api/scenario/copy/${scenarioId}/${encodeURIComponent(' copied')}`),
        'params.copiedScenarioName',
      );
    });

    it('in the scenario name of a score, an async score and a batch', async () => {
      const score = await request(testApp.app)
        .post('/api/scenario/code/remote/score')
        .query({ name: 'credit-decision ', key: alice.scoreToken })
        .send({});
      expect400(score, 'query.name');
      const async = await request(testApp.app)
        .post(`/api/scenario/code/scoreasync/${encodeURIComponent('credit-decision ')}`)
        .set('Score-Token', alice.scoreToken)
        .set('X-SCE-RequestId', 'ws-1')
        .send({});
      expect400(async, 'params.name');
      const batch = await request(testApp.app)
        .post('/api/batch/score')
        .query({ key: alice.scoreToken })
        .send({ scenarioName: 'credit-decision\t', parameters: [{}] });
      expect400(batch, 'body.scenarioName');
    });

    it('in the username of the context', async () => {
      const response = await request(testApp.app)
        .get('/api/scenario/export')
        .query({ context: JSON.stringify({ actors: { requester: { username: `${alice.username} ` } } }) })
        .set(bearer(alice));
      expect400(response, 'query.context.actors.requester.username');
      const legacy = await request(testApp.app)
        .get('/api/scenario/export')
        .query({ context: JSON.stringify({ requester: { username: `${alice.username} ` } }) })
        .set(bearer(alice));
      expect400(legacy, 'query.context.requester.username');
    });

    it('in a collection name', async () => {
      expect400(await upload(testApp, alice, 'customers ', 'id\n1\n'), 'params.collection_name');
    });
  });
});
