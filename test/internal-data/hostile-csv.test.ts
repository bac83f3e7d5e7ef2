import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InternalDataService } from '../../src/internal-data/internal-data-service.js';
import type { TestApp, TestUser } from '../support/test-app.js';
import { allRows, collectionTables, getRows, uniqueName, upload } from './support/collections.js';
import { createLoadTestApp, LOAD_PATHS, type RecordingStore } from './support/load-paths.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hostile-csv-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

// Hostile files on both load paths: LOAD DATA LOCAL INFILE, and the multi-row INSERT fallback
// taken when the server has local_infile OFF.
describe.each(LOAD_PATHS)('%s', (loadPath) => {
  let testApp: TestApp;
  let user: TestUser;
  let store: RecordingStore;
  let service: InternalDataService;
  let canary: string;

  beforeAll(async () => {
    ({ testApp, store } = await createLoadTestApp(loadPath));
    user = await testApp.newUser();
    service = new InternalDataService(store, testApp.services.collectionLookups, testApp.services.logger);
    canary = uniqueName('canary');
    await testApp.services.db.raw('CREATE TABLE ?? (id INT)', [canary]);
  });
  afterAll(async () => {
    await testApp.services.db.raw('DROP TABLE IF EXISTS ??', [canary]);
    await testApp.close();
  });
  afterEach(() => {
    store.afterCreateTable = undefined;
  });

  /**
   * Loads `validated` through the service, but the second pass reads `sent`: the file is rewritten
   * once the first pass has accepted it and the table exists. Whatever the first pass concluded,
   * the rows that reach the database must be checked again, by the same tokenizer and encoder.
   */
  async function loadChangedBetweenPasses(name: string, validated: string, sent: string) {
    const path = join(dir, `${name}.csv`);
    await writeFile(path, validated);
    store.afterCreateTable = () => writeFile(path, sent);
    return service.load({ ownerId: user.id, collection: name, fileName: 'f.csv', path });
  }

  async function canaryExists(): Promise<boolean> {
    const [rows] = (await testApp.services.db.raw(
      'SELECT COUNT(*) AS n FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
      [canary],
    )) as [Array<{ n: number }>, unknown];
    return Number(rows[0].n) === 1;
  }

  it.each([
    ['SQL that ends the statement', `1);DROP TABLE ${'CANARY'};--`],
    ['a subquery', '(SELECT COUNT(*) FROM users)'],
    ['an expression', '1+1'],
    ['a hexadecimal literal', '0x41'],
    ['a number with a tab in it', '1\t2'],
  ])('refuses %s in a number column naming line and column, and writes nothing', async (_label, hostile) => {
    const name = uniqueName();
    const value = hostile.replace('CANARY', canary);
    const quoted = `"${value.replace(/"/g, '""')}"`;
    const error = await loadChangedBetweenPasses(name, 'id,v\n1,a\n2,b\n', `id,v\n1,a\n${quoted},b\n`).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({
      status: 400,
      code: 'INVALID_CSV',
      message: expect.stringMatching(/line 3.*column "id"/),
    });
    expect(await canaryExists()).toBe(true);
    await getRows(testApp, user, name).expect(404);
  });

  it.each([
    ['too wide', 'id,v\n1,a\n2,b,extra\n'],
    ['too narrow', 'id,v\n1,a\n2\n'],
  ])('refuses a row %s in the second pass, naming its line, and writes nothing', async (_label, sent) => {
    const name = uniqueName();
    const error = await loadChangedBetweenPasses(name, 'id,v\n1,a\n2,b\n', sent).catch((caught: unknown) => caught);
    expect(error).toMatchObject({
      status: 400,
      code: 'INVALID_CSV',
      message: expect.stringMatching(/line 3 has \d fields?, the header has 2/),
    });
    await getRows(testApp, user, name).expect(404);
  });

  it('refuses text longer than its column in the second pass', async () => {
    const name = uniqueName();
    const error = await loadChangedBetweenPasses(name, 'id,v\n1,a\n', `id,v\n1,${'x'.repeat(300)}\n`).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({
      status: 400,
      code: 'INVALID_CSV',
      message: expect.stringMatching(/line 2.*column "v".*255/),
    });
  });

  it('answers 400 for SQL in a number column of an append, and keeps the collection as it was', async () => {
    const name = uniqueName();
    await upload(testApp, user, name, 'id,v\n1,a\n').expect(201);
    const response = await upload(testApp, user, name, `id,v\n2,b\n"1);DROP TABLE ${canary};--",c\n`);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({
      code: 'INVALID_CSV',
      message: expect.stringMatching(/line 3: column "id" is INTEGER but the value is text/),
    });
    expect(await allRows(testApp, user, name)).toEqual([{ id: 1, v: 'a' }]);
    expect(await canaryExists()).toBe(true);
  });

  it('stores SQL-looking text in a text column unchanged', async () => {
    const name = uniqueName();
    const text = `1);DROP TABLE ${canary};--`;
    await upload(testApp, user, name, `id,v\n1,"${text}"\n2,'); DELETE FROM users; --\n`).expect(201);
    expect(await allRows(testApp, user, name)).toEqual([
      { id: 1, v: text },
      { id: 2, v: "'); DELETE FROM users; --" },
    ]);
    expect(await canaryExists()).toBe(true);
  });

  it('answers 400 naming the lines of rows too wide or too narrow, and creates no table', async () => {
    const tables = await collectionTables(testApp);
    const response = await upload(testApp, user, uniqueName(), 'a,b\n1,2\n3,4,5\n6\n');
    expect(response.status).toBe(400);
    expect(response.body.details.map((detail: { path: string }) => detail.path)).toEqual(['line 3', 'line 4']);
    expect(await collectionTables(testApp)).toEqual(tables);
  });
});
