import request from 'supertest';
import { AjvCompileSpy } from '../support/ajv-compile-spy.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';

/**
 * With VALIDATE_RESPONSES on, every operation's response checks are compiled when the app is built.
 * Compiled at an operation's first answer instead (as express-openapi-validator does), they held the
 * event loop 120–430 ms once per operation and process, which let one tenant's first request to an
 * operation stall every other tenant's (issue #26, the validation attack of `npm run bench:fairness`).
 */
const spy = new AjvCompileSpy();
const compiled = spy.schemas;

let t: TestApp;
let user: TestUser;

beforeAll(async () => {
  spy.start();
  t = await createTestApp({ configOverrides: { validateResponses: true } });
  user = await t.newUser();
});
afterAll(async () => {
  spy.stop();
  await t.close();
});

/**
 * A response check's schema: ours name the spec's `Error` body by its Ajv id; express-openapi-validator's
 * wrap the declared schema as `{ properties: { response }, components }`. (A request validator's never do.)
 */
const isResponseCheck = (schema: unknown) => {
  const wrapped = schema as { properties?: { response?: unknown }; components?: unknown } | undefined;
  return (
    (wrapped?.properties?.response !== undefined && wrapped.components !== undefined) ||
    /schema:Error"/.test(JSON.stringify(schema) ?? '')
  );
};

it('compiles the response checks of every operation before the first request', async () => {
  expect(compiled.filter(isResponseCheck).length).toBeGreaterThan(30);
});

it("compiles no response schema at an operation's first answer, success or error", async () => {
  compiled.length = 0;
  const collections = await request(t.app)
    .get('/api/internaldata/collections')
    .set('Authorization', `Bearer ${user.accessToken}`);
  expect(collections.status).toBe(200);
  const missing = await request(t.app)
    .get('/api/scenario/999999999')
    .set('Authorization', `Bearer ${user.accessToken}`);
  expect(missing.status).toBe(404);
  expect(compiled.filter(isResponseCheck)).toEqual([]);
});
