import request from 'supertest';
import { createScenario, simpleScenario } from '../scenarios/support/fixtures.js';
import { useTestApp } from '../support/test-app.js';

/** Numeric query and header parameters: ±Infinity is a 400; ids out of every range are unknown (404); never a 500. */

const t = useTestApp();

const bearer = () => ({ Authorization: `Bearer ${t.user.accessToken}` });

describe('numbers past ±1.8e308 in numeric parameters', () => {
  it.each([
    ['limit', 'Infinity'],
    ['offset', '1e400'],
    ['offset', '-Infinity'],
  ])('answers 400 naming %s for %s=%s on a collection read', async (name, value) => {
    const response = await request(t.app.app)
      .get('/api/internaldata/collections/anything')
      .query({ [name]: value })
      .set(bearer());
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([expect.objectContaining({ path: `query.${name}` })]);
  });

  it('answers 400 naming the header for X-SCE-CallbackRetryDelay: 1e400 on an async submission', async () => {
    const response = await request(t.app.app)
      .post('/api/scenario/code/scoreasync/anything')
      .set('Score-Token', t.user.scoreToken)
      .set('X-SCE-CallbackRetryDelay', '1e400')
      .send({});
    expect(response.status).toBe(400);
    expect(response.body.details).toEqual([
      expect.objectContaining({ path: expect.stringMatching(/^headers\.x-sce-callbackretrydelay$/i) }),
    ]);
  });
});

describe('scenario and test case ids out of every range (ids are decimal strings)', () => {
  it.each([
    ['Infinity', 'Infinity'],
    ['1e400', '1e400'],
    ['a 400-digit number', '9'.repeat(400)],
    ['4294967296', '4294967296'],
    ['99999999999999999999', '99999999999999999999'],
  ])('answers 404 for scenario id %s, never a 500', async (_label, id) => {
    const response = await request(t.app.app)
      .get(`/api/scenario/${id}/version`)
      .query({ context: t.user.context() })
      .set(bearer());
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('SCENARIO_NOT_FOUND');
  });

  it('answers 404 for test case id Infinity of a scenario of the t.user, never a 500', async () => {
    const scenarioId = await createScenario(t.app, t.user, simpleScenario('finite-ids'));
    const response = await request(t.app.app)
      .put(`/api/scenario/${scenarioId}/testcases/Infinity`)
      .query({ context: t.user.context() })
      .set(bearer())
      .send({ name: 't', variables: [], expression: { code: 'true' } });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('TEST_CASE_NOT_FOUND');
  });
});
