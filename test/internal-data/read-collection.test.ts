import request from 'supertest';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { bearer, collectionTables, getRows, uniqueName, upload } from './support/collections.js';

let testApp: TestApp;
let user: TestUser;
let name: string;

const CSV = [
  'id,segment,score,vip',
  ...Array.from(
    { length: 250 },
    (_, index) => `${index + 1},${index % 3 === 0 ? 'gold' : 'basic'},${(index + 1) / 2},${index % 2 === 0}`,
  ),
  '251,,0.5,',
].join('\n');

beforeAll(async () => {
  testApp = await createTestApp();
  user = await testApp.newUser();
  name = uniqueName('customers');
  await upload(testApp, user, name, CSV, { indexes: 'id,true;segment,false' }).expect(201);
});
afterAll(async () => testApp.close());

describe('listCollections', () => {
  it("lists only the caller's collections, sorted by name", async () => {
    const own = await testApp.newUser();
    await upload(testApp, own, 'zeta', 'a\n1\n').expect(201);
    await upload(testApp, own, 'Alpha', 'a\n1\n').expect(201);
    await upload(testApp, own, 'beta', 'a\n1\n').expect(201);
    const response = await request(testApp.app).get('/api/internaldata/collections').set(bearer(own));
    expect(response.status).toBe(200);
    expect(response.body.map((entry: { name: string }) => entry.name)).toEqual(['Alpha', 'beta', 'zeta']);
    expect(response.body[0]).toMatchObject({ owner: own.username, rowCount: 1 });
  });

  it('answers an empty list for a new user', async () => {
    const fresh = await testApp.newUser();
    const response = await request(testApp.app).get('/api/internaldata/collections').set(bearer(fresh));
    expect(response.body).toEqual([]);
  });

  it('answers 401 without a token', async () => {
    await request(testApp.app).get('/api/internaldata/collections').expect(401);
  });
});

describe('getCollectionRows', () => {
  it('answers the first 100 rows in load order by default', async () => {
    const response = await getRows(testApp, user, name);
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ collection: name, limit: 100, offset: 0, total: 251 });
    expect(response.body.rows).toHaveLength(100);
    expect(response.body.rows[0]).toEqual({ id: 1, segment: 'gold', score: 0.5, vip: true });
    expect(response.body.rows[99].id).toBe(100);
  });

  it('pages with limit and offset', async () => {
    const response = await getRows(testApp, user, name, { limit: 10, offset: 245 });
    expect(response.body).toMatchObject({ limit: 10, offset: 245, total: 251 });
    expect(response.body.rows.map((row: { id: number }) => row.id)).toEqual([246, 247, 248, 249, 250, 251]);
    expect(response.body.rows[5]).toEqual({ id: 251, segment: null, score: 0.5, vip: null });
  });

  it('answers 400 for a limit over 10,000', async () => {
    const response = await getRows(testApp, user, name, { limit: 10001 });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/limit/);
  });

  it.each(['99999999999999999999', '1e21', '9007199254740992'])(
    'answers 400 naming the parameter for offset=%s (beyond the largest offset)',
    async (offset) => {
      const response = await getRows(testApp, user, name, { offset });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('VALIDATION_FAILED');
      expect(response.body.details).toEqual([expect.objectContaining({ path: 'query.offset' })]);
    },
  );

  it('answers an empty page at the largest offset', async () => {
    const response = await getRows(testApp, user, name, { offset: '9007199254740991' });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ offset: 9007199254740991, total: 251, rows: [] });
  });

  it('refuses an offset or limit that is not a safe integer even when the spec was not consulted', async () => {
    const rows = (offset: number, limit?: number) =>
      testApp.services.internalData.rows(user.id, name, { offset, limit });
    await expect(rows(1e20)).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      details: [{ path: 'query.offset' }],
    });
    await expect(rows(-1)).rejects.toMatchObject({ status: 400, details: [{ path: 'query.offset' }] });
    await expect(rows(0, 2.5)).rejects.toMatchObject({ status: 400, details: [{ path: 'query.limit' }] });
  });

  it('filters by equality, converting values to the column types', async () => {
    const response = await getRows(testApp, user, name, { 'filter[segment]': 'gold', 'filter[vip]': 'true', limit: 3 });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(42);
    expect(response.body.rows).toEqual([
      { id: 1, segment: 'gold', score: 0.5, vip: true },
      { id: 7, segment: 'gold', score: 3.5, vip: true },
      { id: 13, segment: 'gold', score: 6.5, vip: true },
    ]);
    const byNumber = await getRows(testApp, user, name, { 'filter[score]': '2.5', 'filter[ID]': '5' });
    expect(byNumber.body.rows).toEqual([{ id: 5, segment: 'basic', score: 2.5, vip: true }]);
  });

  it('matches NULL with an empty filter value', async () => {
    const response = await getRows(testApp, user, name, { 'filter[segment]': '' });
    expect(response.body.total).toBe(1);
    expect(response.body.rows[0].id).toBe(251);
  });

  it('answers 400 naming an unknown filter column', async () => {
    const response = await getRows(testApp, user, name, { 'filter[nope]': 'x' });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/unknown column "nope"/);
    expect(response.body.details[0].path).toBe('query.filter[nope]');
  });

  it.each(['constructor', 'toString', '__proto__'])(
    'answers 400 naming filter[%s], a column it does not have, instead of ignoring the filter',
    async (column) => {
      const response = await getRows(testApp, user, name, { [`filter[${column}]`]: '1' });
      expect(response.status).toBe(400);
      expect(response.body.details[0].path).toBe(`query.filter[${column}]`);
    },
  );

  it('decodes a filter value exactly once (%2B is a plus sign, not a space)', async () => {
    const response = await getRows(testApp, user, name, { 'filter[segment]': 'gold+' });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(0);
    const gold = await testApp.services.internalData.rows(user.id, name, { filter: { segment: 'gold' } });
    expect(gold.total).toBeGreaterThan(0);
  });

  it('answers 400 for a filter value the column type cannot hold', async () => {
    const response = await getRows(testApp, user, name, { 'filter[id]': 'abc' });
    expect(response.status).toBe(400);
    expect(response.body.message).toMatch(/not a valid INTEGER/);
  });

  it("answers 404 COLLECTION_NOT_FOUND for another user's collection", async () => {
    const other = await testApp.newUser();
    const response = await getRows(testApp, other, name);
    expect(response.status).toBe(404);
    expect(response.body.code).toBe('COLLECTION_NOT_FOUND');
  });

  it('answers 400 for a hostile name and 401 without a token', async () => {
    await getRows(testApp, user, 'a;drop table users').expect(400);
    await request(testApp.app).get(`/api/internaldata/collections/${name}`).expect(401);
  });
});

describe('getCollectionColumns and getCollectionIndexes', () => {
  it('answers the columns in file order', async () => {
    const response = await request(testApp.app).get(`/api/internaldata/columns/${name}`).set(bearer(user));
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { name: 'id', type: 'INTEGER', nullable: false },
      { name: 'segment', type: 'STRING', nullable: true },
      { name: 'score', type: 'DOUBLE', nullable: false },
      { name: 'vip', type: 'BOOLEAN', nullable: true },
    ]);
  });

  it('answers the indexes, without the primary key', async () => {
    const response = await request(testApp.app).get(`/api/internaldata/indexes/${name}`).set(bearer(user));
    expect(response.status).toBe(200);
    expect(response.body).toEqual([
      { name: 'ix_segment', columns: ['segment'], unique: false },
      { name: 'ux_id', columns: ['id'], unique: true },
    ]);
  });

  it("answers 404 for a missing or another user's collection", async () => {
    const other = await testApp.newUser();
    for (const path of ['columns', 'indexes']) {
      const missing = await request(testApp.app).get(`/api/internaldata/${path}/nothing_here`).set(bearer(user));
      expect(missing.status).toBe(404);
      expect(missing.body.code).toBe('COLLECTION_NOT_FOUND');
      const foreign = await request(testApp.app).get(`/api/internaldata/${path}/${name}`).set(bearer(other));
      expect(foreign.status).toBe(404);
    }
  });

  it('answers 401 without a token', async () => {
    await request(testApp.app).get(`/api/internaldata/columns/${name}`).expect(401);
    await request(testApp.app).get(`/api/internaldata/indexes/${name}`).expect(401);
  });
});

describe('deleteCollection', () => {
  it('drops the table and the registry entry (204), then answers 404', async () => {
    const doomed = uniqueName('doomed');
    await upload(testApp, user, doomed, 'a\n1\n').expect(201);
    const tablesBefore = await collectionTables(testApp);
    const response = await request(testApp.app)
      .delete(`/api/internaldata/collections/delete/${doomed}`)
      .set(bearer(user));
    expect(response.status).toBe(204);
    const tablesAfter = await collectionTables(testApp);
    expect(tablesAfter.length).toBe(tablesBefore.length - 1);
    await getRows(testApp, user, doomed).expect(404);
    const again = await request(testApp.app).delete(`/api/internaldata/collections/delete/${doomed}`).set(bearer(user));
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('COLLECTION_NOT_FOUND');
    // The name is free again.
    await upload(testApp, user, doomed, 'b\n2\n').expect(201);
  });

  it("answers 404 for another user's collection and leaves it alone", async () => {
    const other = await testApp.newUser();
    const response = await request(testApp.app)
      .delete(`/api/internaldata/collections/delete/${name}`)
      .set(bearer(other));
    expect(response.status).toBe(404);
    await getRows(testApp, user, name).expect(200);
  });

  it('answers 400 for a hostile name and 401 without a token', async () => {
    await request(testApp.app).delete('/api/internaldata/collections/delete/x%3Bdrop').set(bearer(user)).expect(400);
    await request(testApp.app).delete(`/api/internaldata/collections/delete/${name}`).expect(401);
  });
});
