import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseQueryString } from '../../src/http/query-string.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { createUndeployedScenario, deployScenario, doublingScenario } from '../support/scenario-fixtures.js';

/**
 * One reading of a query and of an empty body, on both lanes (issue #29, items 1 and 2): reserved characters RFC 3986
 * allows in a query come raw (axios leaves `:` raw in date-times), `+` is a space, and a request without body bytes
 * has no body whatever its Content-Type (axios posts `undefined` as form-urlencoded with `Content-Length: 0`).
 */
describe('query strings and empty bodies as clients send them', () => {
  let t: TestApp;
  let user: TestUser;
  let id: string;
  const bearer = () => `Bearer ${user.accessToken}`;

  beforeAll(async () => {
    t = await createTestApp();
    user = await t.newUser();
    await deployScenario(t.services.db, user.id, 'credit decision', doublingScenario());
    id = String(((await t.services.db('scenarios').where({ owner_id: user.id }).first('id')) as { id: number }).id);
  });
  afterAll(async () => t.close());

  it('reads a raw `:` in a date-time query value (it was 400 "must be url encoded")', async () => {
    const raw = await request(t.app)
      .get(`/api/scenario/${id}/statistics?from=2026-11-26T20:00:00Z&to=2026-11-26T21:00:00Z`)
      .set('Authorization', bearer());
    expect(raw.status).toBe(200);
    const encoded = await request(t.app)
      .get(
        `/api/scenario/${id}/statistics?from=${encodeURIComponent('2026-11-26T20:00:00Z')}&to=${encodeURIComponent('2026-11-26T21:00:00Z')}`,
      )
      .set('Authorization', bearer());
    expect(raw.body).toEqual(encoded.body);
  });

  it('reads `+` as a space, as the fast lane does (export of "credit decision")', async () => {
    const plus = await request(t.app).get('/api/scenario/export?name=credit+decision').set('Authorization', bearer());
    expect(plus.status).toBe(200);
    expect(JSON.stringify(plus.body)).toContain('credit decision');
    const score = await request(t.app)
      .post('/api/scenario/code/remote/score?name=credit+decision')
      .set('Score-Token', user.scoreToken)
      .send({ a: 2 });
    expect(score.body).toMatchObject({ state: 'SUCCEEDED', result: { doubled: 4 } });
  });

  it.each(['validate', 'deploy'])(
    'takes a %s without body bytes as no body, whatever its Content-Type (it was 415)',
    async (operation) => {
      for (const contentType of ['application/x-www-form-urlencoded', 'text/plain', 'application/octet-stream']) {
        const name = `${operation}-${contentType.replace(/\W/g, '-')}`;
        await createUndeployedScenario(t.services.db, user.id, name);
        const scenarioId = (
          (await t.services.db('scenarios').where({ owner_id: user.id, name }).first('id')) as { id: number }
        ).id;
        const answer = await request(t.app)
          .post(`/api/scenario/${operation}/${scenarioId}`)
          .set('Authorization', bearer())
          .set('Content-Type', contentType)
          .set('Content-Length', '0');
        expect([contentType, answer.status]).toEqual([contentType, 204]);
      }
    },
  );

  it('still answers 415 for body bytes of a media type the operation does not take', async () => {
    const answer = await request(t.app)
      .post(`/api/scenario/validate/${id}`)
      .set('Authorization', bearer())
      .set('Content-Type', 'text/plain')
      .send('a=1');
    expect(answer.status).toBe(415);
  });

  it('reads every query with one parser: `+` a space, escapes decoded once, reserved characters raw', () => {
    expect({
      ...parseQueryString(
        'context[actors][requester][username]=al+ice&from=2026-11-26T20:00:00Z&indexes=id,true;s,false&x&&name=a%2Bb',
      ),
    }).toEqual({
      'context[actors][requester][username]': 'al ice',
      from: '2026-11-26T20:00:00Z',
      indexes: 'id,true;s,false',
      x: '',
      name: 'a+b',
    });
    expect({ ...parseQueryString('a=%zz&b=%2B&a=2&__proto__=p') }).toEqual({
      a: ['%zz', '2'],
      b: '+',
      ['__proto__']: 'p',
    });
    expect(Object.getPrototypeOf(Object.getPrototypeOf(parseQueryString('')))).toBeNull();
  });
});
