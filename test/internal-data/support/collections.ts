import request from 'supertest';
import type { TestApp, TestUser } from '../../support/test-app.js';

let counter = 0;

/** A collection name no other test uses. */
export function uniqueName(prefix = 'c'): string {
  counter += 1;
  return `${prefix}_${Date.now().toString(36)}_${counter}`;
}

export function bearer(user: TestUser): { Authorization: string } {
  return { Authorization: `Bearer ${user.accessToken}` };
}

/** Uploads `csv` as the multipart file part `file` to loadCollectionData. */
export function upload(
  testApp: TestApp,
  user: TestUser,
  collection: string,
  csv: string | Buffer,
  options: { indexes?: string; fileName?: string } = {},
) {
  const query: Record<string, string> = { fileName: options.fileName ?? 'data.csv' };
  if (options.indexes !== undefined) query.indexes = options.indexes;
  return request(testApp.app)
    .post(`/api/internaldata/collections/loadData/${encodeURIComponent(collection)}`)
    .query(query)
    .set(bearer(user))
    .attach('file', typeof csv === 'string' ? Buffer.from(csv, 'utf8') : csv, options.fileName ?? 'data.csv');
}

export function getRows(testApp: TestApp, user: TestUser, collection: string, query: Record<string, unknown> = {}) {
  return request(testApp.app)
    .get(`/api/internaldata/collections/${encodeURIComponent(collection)}`)
    .query(query)
    .set(bearer(user));
}

/** Every row of a collection (load order), read through the API. */
export async function allRows(
  testApp: TestApp,
  user: TestUser,
  collection: string,
): Promise<Array<Record<string, unknown>>> {
  const response = await getRows(testApp, user, collection, { limit: 10000 });
  if (response.status !== 200) throw new Error(`rows: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.rows as Array<Record<string, unknown>>;
}

/** Names of the collection tables (`idc_<id>`) in the test database. */
export async function collectionTables(testApp: TestApp): Promise<string[]> {
  const [rows] = (await testApp.services.db.raw(
    "SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE 'idc\\_%'",
  )) as [Array<{ name: string }>, unknown];
  return rows.map((row) => row.name).sort();
}
