import request from 'supertest';
import { AjvCompileSpy } from '../support/ajv-compile-spy.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * Every operation's request check is compiled when the app is built (src/http/request-check.ts), before the service
 * listens: express-openapi-validator built each at the operation's first request of each Content-Type, 30–200 ms of
 * the event loop in the middle of serving other tenants (issues #26 and #28). First requests compile nothing.
 */
const spy = new AjvCompileSpy();

let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  spy.start();
  t = await createTestApp();
  user = await t.newUser();
}, 60_000);
afterAll(async () => {
  spy.stop();
  await t.close();
});

const bearer = () => ({ Authorization: `Bearer ${user.accessToken}` });
const firstRequests = async () => {
  await request(t.app).get('/api/internaldata/collections').set(bearer());
  await request(t.app)
    .post(`/api/scenario/import?context=%7B%7D`)
    .set(bearer())
    .set('Content-Type', 'application/json')
    .send({ name: 'warm' });
  await request(t.app)
    .post(`/api/scenario/import?context=%7B%7D`)
    .set(bearer())
    .set('Content-Type', 'application/yaml; charset=utf-8')
    .send('name: warm\n');
  await request(t.app).get('/api/scenario/open/1?context=%7B%7D').set(bearer());
  await request(t.app).get('/api/scenario/export').set(bearer());
};

it('compiles the request checks of every operation with the app, and nothing at the first requests after', async () => {
  // Three checks per operation (query, path, header parameters) and one per body media type.
  expect(spy.schemas.length).toBeGreaterThan(3 * 41);
  spy.schemas.length = 0;
  await firstRequests();
  expect(spy.schemas.length).toBe(0);
}, 120_000);
