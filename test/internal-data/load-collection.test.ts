import request from 'supertest';
import type { TestApp, TestUser } from '../support/test-app.js';
import { allRows, bearer, collectionTables, getRows, uniqueName, upload } from './support/collections.js';
import { createLoadTestApp, LOAD_PATHS, type RecordingStore } from './support/load-paths.js';

/** Staging tables (`idcstage_<collection id>_…`) of the collection named `name`, if any are left. */
async function stagingTables(testApp: TestApp, user: TestUser, name: string): Promise<string[]> {
  const [entries] = (await testApp.services.db.raw(
    'SELECT id FROM internal_collections WHERE owner_id = ? AND name = ?',
    [user.id, name],
  )) as [Array<{ id: number }>, unknown];
  if (entries.length === 0) return [];
  const [rows] = (await testApp.services.db.raw(
    'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ?',
    [`idcstage\\_${entries[0].id}\\_%`],
  )) as [Array<{ name: string }>, unknown];
  return rows.map((row) => row.name);
}

// Every test runs on both load paths: LOAD DATA LOCAL INFILE (the server allows it here) and the
// multi-row INSERT fallback taken when the server has local_infile OFF.
describe.each(LOAD_PATHS)('%s', (loadPath) => {
  const fast = loadPath === 'LOAD DATA LOCAL INFILE';
  let testApp: TestApp;
  let user: TestUser;
  let store: RecordingStore;

  beforeAll(async () => {
    ({ testApp, store } = await createLoadTestApp(loadPath));
    user = await testApp.newUser();
  });
  afterAll(async () => testApp.close());
  describe('loadCollectionData: creating a collection', () => {
    it('answers 201 with a LoadReport and infers INTEGER, DOUBLE, BOOLEAN and STRING columns', async () => {
      const name = uniqueName();
      const response = await upload(
        testApp,
        user,
        name,
        'id,score,active,label,empty\n1,1.5,true,a,\n2,2,FALSE,b,\n3,-3e2,true,,\n',
        { fileName: 'people.csv', indexes: 'id,true;label,false' },
      );
      expect(response.status).toBe(201);
      expect(response.body).toEqual({
        collection: name,
        created: true,
        rowsLoaded: 3,
        rowCount: 3,
        columns: [
          { name: 'id', type: 'INTEGER', nullable: false },
          { name: 'score', type: 'DOUBLE', nullable: false },
          { name: 'active', type: 'BOOLEAN', nullable: false },
          { name: 'label', type: 'STRING', nullable: true },
          { name: 'empty', type: 'STRING', nullable: true },
        ],
        indexes: [
          { name: 'ix_label', columns: ['label'], unique: false },
          { name: 'ux_id', columns: ['id'], unique: true },
        ],
      });
      expect(await allRows(testApp, user, name)).toEqual([
        { id: 1, score: 1.5, active: true, label: 'a', empty: null },
        { id: 2, score: 2, active: false, label: 'b', empty: null },
        { id: 3, score: -300, active: true, label: null, empty: null },
      ]);
    });

    it('widens a column when a later value does not fit: INTEGER → DOUBLE → STRING, BOOLEAN → STRING', async () => {
      const name = uniqueName();
      const csv = 'a,b,c,d,e\n1,1,true,007,1\n2,2.5,false,8,99999999999999999999\n3,x,1,9,2\n';
      const response = await upload(testApp, user, name, csv);
      expect(response.status).toBe(201);
      expect(response.body.columns.map((column: { type: string }) => column.type)).toEqual([
        'INTEGER',
        'STRING',
        'STRING',
        'STRING',
        'STRING',
      ]);
      const rows = await allRows(testApp, user, name);
      expect(rows.map((row) => row.b)).toEqual(['1', '2.5', 'x']);
      expect(rows.map((row) => row.c)).toEqual(['true', 'false', '1']);
      // Leading zeros and integers beyond BIGINT stay text, unchanged.
      expect(rows.map((row) => row.d)).toEqual(['007', '8', '9']);
      expect(rows[1].e).toBe('99999999999999999999');
    });

    it('keeps DOUBLE for a mix of integers and decimals', async () => {
      const name = uniqueName();
      const response = await upload(testApp, user, name, 'x\n1\n2.25\n-3\n');
      expect(response.body.columns[0]).toEqual({ name: 'x', type: 'DOUBLE', nullable: false });
      expect((await allRows(testApp, user, name)).map((row) => row.x)).toEqual([1, 2.25, -3]);
    });

    it.each([
      ['comma', 'id,name\n1,a\n2,b\n'],
      ['semicolon', 'id;name\n1;a\n2;b\n'],
      ['tab', 'id\tname\n1\ta\n2\tb\n'],
      ['CRLF line ends', 'id,name\r\n1,a\r\n2,b\r\n'],
      ['no final newline', 'id,name\n1,a\n2,b'],
      ['a byte-order mark', '\uFEFFid,name\n1,a\n2,b\n'],
    ])('detects the format of a file with %s', async (_label, csv) => {
      const name = uniqueName();
      const response = await upload(testApp, user, name, csv);
      expect(response.status).toBe(201);
      expect(await allRows(testApp, user, name)).toEqual([
        { id: 1, name: 'a' },
        { id: 2, name: 'b' },
      ]);
    });

    it('reads quoted fields holding delimiters, quotes, newlines and SQL-looking text unchanged', async () => {
      const name = uniqueName();
      const csv =
        'id;text\n1;"a;b,c"\n2;"line one\nline two"\n3;"say ""hi"""\n4;"x\'); DROP TABLE users; -- ? \\ \\n"\n';
      const response = await upload(testApp, user, name, csv);
      expect(response.status).toBe(201);
      expect((await allRows(testApp, user, name)).map((row) => row.text)).toEqual([
        'a;b,c',
        'line one\nline two',
        'say "hi"',
        "x'); DROP TABLE users; -- ? \\ \\n",
      ]);
    });

    it('skips blank lines', async () => {
      const name = uniqueName();
      const response = await upload(testApp, user, name, 'id\n1\n\n2\n\n');
      expect(response.status).toBe(201);
      expect(response.body.rowsLoaded).toBe(2);
    });

    it('keeps the registry data: owner, file name, row count', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id\n1\n2\n', { fileName: 'ids.csv' }).expect(201);
      const list = await request(testApp.app).get('/api/internaldata/collections').set(bearer(user));
      const info = list.body.find((entry: { name: string }) => entry.name === name);
      expect(info).toMatchObject({
        name,
        owner: user.username,
        rowCount: 2,
        fileName: 'ids.csv',
        columns: [{ name: 'id', type: 'INTEGER', nullable: false }],
      });
      expect(Date.parse(info.createdAt)).not.toBeNaN();
    });
  });

  describe('loadCollectionData: rejected files', () => {
    it.each([
      ['an empty file', '', /empty/],
      ['a file of blank lines', '\n\n', /empty/],
      ['a header without rows', 'id,name\n', /no data rows/],
    ])('answers 400 INVALID_CSV for %s', async (_label, csv, message) => {
      const response = await upload(testApp, user, uniqueName(), csv);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_CSV');
      expect(response.body.message).toMatch(message);
    });

    it('answers 400 naming the line of a row with too many or too few fields', async () => {
      const response = await upload(testApp, user, uniqueName(), 'a,b\n1,2\n3\n4,5\n6,7,8\n');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_CSV');
      expect(response.body.message).toMatch(/line 3 has 1 field, the header has 2/);
      expect(response.body.details.map((detail: { line: number }) => detail.line)).toEqual([3, 5]);
    });

    it('answers 400 naming the line of an unterminated quote', async () => {
      const response = await upload(testApp, user, uniqueName(), 'a,b\n1,2\n3,"open\n');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_CSV');
      expect(response.body.message).toMatch(/line 3/);
    });

    it('answers 400 naming duplicate column names (names ignore case)', async () => {
      const response = await upload(testApp, user, uniqueName(), 'id,Name,name\n1,a,b\n');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_CSV');
      expect(response.body.message).toMatch(/duplicate column name "name"/);
      expect(response.body.details[0]).toMatchObject({ column: 3 });
    });

    it.each([
      ['a space', 'first name'],
      ['a backtick', 'a`b'],
      ['SQL', 'x);drop table users;--'],
      ['a leading digit', '1abc'],
      ['65 characters', `a${'b'.repeat(64)}`],
      ['the reserved row id', '_row_id'],
    ])('answers 400 naming a column name with %s', async (_label, header) => {
      const csv = `id,"${header.replace(/"/g, '""')}"\n1,2\n`;
      const response = await upload(testApp, user, uniqueName(), csv);
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_CSV');
      expect(response.body.message).toContain(header.slice(0, 20));
    });

    it('answers 400 for an empty column name', async () => {
      const response = await upload(testApp, user, uniqueName(), 'id,,x\n1,2,3\n');
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/column 2 has an empty name/);
    });

    it.each([
      ['an unknown column', 'id,true;nope,false', /unknown column "nope"/],
      ['a missing flag', 'id', /malformed entry "id"/],
      ['a flag that is not a boolean', 'id,yes', /malformed entry "id,yes"/],
      ['too many parts', 'id,true,false', /malformed entry/],
      ['a column listed twice', 'id,true;ID,true', /listed twice/],
    ])('answers 400 INVALID_INDEXES for %s', async (_label, indexes, message) => {
      const name = uniqueName();
      const response = await upload(testApp, user, name, 'id,x\n1,2\n', { indexes });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_INDEXES');
      expect(response.body.message).toMatch(message);
      await getRows(testApp, user, name).expect(404);
    });

    it.each([['a;drop table users'], ['../x'], ['a`b'], ['`users`'], [`a${'b'.repeat(64)}`], ['1abc'], ['_x']])(
      'answers 400 for the hostile collection name %s',
      async (name) => {
        const response = await upload(testApp, user, name, 'id\n1\n');
        expect(response.status).toBe(400);
        expect(['VALIDATION_FAILED', 'INVALID_COLLECTION_NAME', 'ROUTE_NOT_FOUND']).toContain(response.body.code);
        expect(response.status).not.toBe(500);
      },
    );

    it('accepts a 64-character name', async () => {
      const name = `a${'b'.repeat(63)}`;
      await upload(testApp, user, name, 'id\n1\n').expect(201);
    });

    it('answers 400 when no file part is sent', async () => {
      const response = await request(testApp.app)
        .post(`/api/internaldata/collections/loadData/${uniqueName()}`)
        .query({ fileName: 'x.csv' })
        .set(bearer(user))
        .field('file', 'id\n1\n');
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/file/);
    });

    it('answers 400 when fileName is missing', async () => {
      const response = await request(testApp.app)
        .post(`/api/internaldata/collections/loadData/${uniqueName()}`)
        .set(bearer(user))
        .attach('file', Buffer.from('id\n1\n'), 'a.csv');
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/fileName/);
    });

    it('answers 401 without a token', async () => {
      const response = await request(testApp.app)
        .post(`/api/internaldata/collections/loadData/${uniqueName()}`)
        .query({ fileName: 'x.csv' })
        .attach('file', Buffer.from('id\n1\n'), 'a.csv');
      expect(response.status).toBe(401);
    });
  });

  describe('loadCollectionData: all or nothing', () => {
    it('answers 409 UNIQUE_VIOLATION for a duplicate in a new collection and leaves no table or registry entry', async () => {
      const name = uniqueName();
      const before = await collectionTables(testApp);
      const rows = Array.from({ length: 5000 }, (_, index) => `${index},v${index}`);
      rows.push('17,again');
      const response = await upload(testApp, user, name, `id,v\n${rows.join('\n')}\n`, { indexes: 'id,true' });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('UNIQUE_VIOLATION');
      expect(response.body.message).toMatch(/ux_id/);
      expect(response.body.message).toMatch(/"17"/);
      await getRows(testApp, user, name).expect(404);
      expect(await collectionTables(testApp)).toEqual(before);
      const list = await request(testApp.app).get('/api/internaldata/collections').set(bearer(user));
      expect(list.body.map((entry: { name: string }) => entry.name)).not.toContain(name);
    });

    it('leaves the collection exactly as it was when an append violates a unique index', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,v\n1,a\n2,b\n', { indexes: 'id,true' }).expect(201);
      const before = await allRows(testApp, user, name);
      const rows = Array.from({ length: 4000 }, (_, index) => `${index + 10},n${index}`);
      rows.push('2,dup');
      const response = await upload(testApp, user, name, `id,v\n${rows.join('\n')}\n`, { fileName: 'second.csv' });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('UNIQUE_VIOLATION');
      expect(await allRows(testApp, user, name)).toEqual(before);
      const page = await getRows(testApp, user, name);
      expect(page.body.total).toBe(2);
      const list = await request(testApp.app).get('/api/internaldata/collections').set(bearer(user));
      expect(list.body.find((entry: { name: string }) => entry.name === name)).toMatchObject({
        rowCount: 2,
        fileName: 'data.csv',
      });
    });

    it('drops an index an append added when the append fails', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,v\n1,a\n2,b\n').expect(201);
      const response = await upload(testApp, user, name, 'id,v\n3,c\n3,d\n', { indexes: 'id,true;v,false' });
      expect(response.status).toBe(409);
      const indexes = await request(testApp.app).get(`/api/internaldata/indexes/${name}`).set(bearer(user));
      expect(indexes.body).toEqual([]);
      expect(await allRows(testApp, user, name)).toEqual([
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
      ]);
    });

    it('answers 409 when a unique index is asked for on data that already repeats a value', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id\n1\n1\n').expect(201);
      const response = await upload(testApp, user, name, 'id\n2\n', { indexes: 'id,true' });
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('UNIQUE_VIOLATION');
      expect((await allRows(testApp, user, name)).length).toBe(2);
    });

    it('loads nothing from a file with a malformed row near its end', async () => {
      const name = uniqueName();
      const rows = Array.from({ length: 3000 }, (_, index) => `${index},x`);
      rows.push('bad');
      const response = await upload(testApp, user, name, `id,v\n${rows.join('\n')}\n`);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/line 3002/);
      await getRows(testApp, user, name).expect(404);
    });
  });

  describe('loadCollectionData: appending', () => {
    it('answers 200 and appends rows after the existing ones, columns matched by name in any order', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,v\n1,a\n').expect(201);
      const response = await upload(testApp, user, name, 'V;ID\nb;2\n;3\n', {
        fileName: 'more.csv',
        indexes: 'id,false',
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        collection: name,
        created: false,
        rowsLoaded: 2,
        rowCount: 3,
        indexes: [{ name: 'ix_id', columns: ['id'], unique: false }],
      });
      expect(response.body.columns).toEqual([
        { name: 'id', type: 'INTEGER', nullable: false },
        { name: 'v', type: 'STRING', nullable: true },
      ]);
      expect(await allRows(testApp, user, name)).toEqual([
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
        { id: 3, v: null },
      ]);
    });

    it('answers 400 COLUMNS_MISMATCH naming missing and unknown columns', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,v\n1,a\n').expect(201);
      const response = await upload(testApp, user, name, 'id,w\n2,b\n');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('COLUMNS_MISMATCH');
      expect(response.body.message).toMatch(/missing column "v"/);
      expect(response.body.message).toMatch(/unknown column "w"/);
    });

    it('answers 400 naming line and column when a value does not fit the column type', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,v\n1,a\n').expect(201);
      const response = await upload(testApp, user, name, 'id,v\n2,b\n3,c\n4.5,d\nx,e\n');
      expect(response.status).toBe(400);
      expect(response.body.code).toBe('INVALID_CSV');
      expect(response.body.message).toMatch(/line 4: column "id" is INTEGER but the value is a decimal number/);
      expect((await allRows(testApp, user, name)).length).toBe(1);
    });

    it('accepts integers into a DOUBLE column and anything into a STRING column', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'x,s\n1.5,a\n').expect(201);
      await upload(testApp, user, name, 'x,s\n2,3\n').expect(200);
      expect(await allRows(testApp, user, name)).toEqual([
        { x: 1.5, s: 'a' },
        { x: 2, s: '3' },
      ]);
    });

    it('answers 400 for a string longer than the column holds', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 's\nshort\n').expect(201);
      const response = await upload(testApp, user, name, `s\nok\n${'x'.repeat(300)}\n`);
      expect(response.status).toBe(400);
      expect(response.body.message).toMatch(/line 3: column "s" holds at most 255 characters/);
    });

    it("never reaches another user's collection: the same name is a new collection of its own", async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id\n1\n').expect(201);
      const other = await testApp.newUser();
      const response = await upload(testApp, other, name, 'other\nx\n');
      expect(response.status).toBe(201);
      expect(await allRows(testApp, user, name)).toEqual([{ id: 1 }]);
      expect(await allRows(testApp, other, name)).toEqual([{ other: 'x' }]);
    });
  });

  describe('loadCollectionData: the load path', () => {
    it(
      fast
        ? 'creates and appends through LOAD DATA LOCAL INFILE, sending no INSERT'
        : 'creates and appends through multi-row INSERTs, never trying LOAD DATA',
      async () => {
        const name = uniqueName();
        store.reset();
        await upload(testApp, user, name, 'id,v\n1,a\n2,b\n', { indexes: 'id,true' }).expect(201);
        await upload(testApp, user, name, 'id,v\n3,c\n').expect(200);
        expect(store.localLoads).toBe(fast ? 2 : 0);
        expect(store.insertStatements > 0).toBe(!fast);
        expect(await allRows(testApp, user, name)).toEqual([
          { id: 1, v: 'a' },
          { id: 2, v: 'b' },
          { id: 3, v: 'c' },
        ]);
      },
    );

    it('keeps tabs, line breaks, backslashes, \\N, NULL, NUL, quotes and non-ASCII text exactly, on create and on append', async () => {
      const name = uniqueName();
      const values = [
        'a\tb',
        'line\nbreak',
        'cr\rhere',
        'back\\slash',
        'ends\\',
        '\\N',
        'NULL',
        'nul\u0000char',
        ' padded ',
        '"quoted"',
        'émoji 😀',
        '\\t\\n literal',
      ];
      const quote = (value: string) => `"${value.replace(/"/g, '""')}"`;
      const csv = `id,text\n${values.map((value, index) => `${index},${quote(value)}`).join('\n')}\n`;
      await upload(testApp, user, name, csv, { indexes: 'text,true' }).expect(201);
      await upload(
        testApp,
        user,
        name,
        `id,text\n${values.map((value, index) => `${index + 100},${quote(`${value}!`)}`).join('\n')}\n`,
      ).expect(200);
      const rows = await allRows(testApp, user, name);
      expect(rows.map((row) => row.text)).toEqual([...values, ...values.map((value) => `${value}!`)]);
      const found = await getRows(testApp, user, name, { 'filter[text]': 'a\tb' }).expect(200);
      expect(found.body.rows).toEqual([{ id: 0, text: 'a\tb' }]);
    });

    it('loads every number and boolean form the types accept, and empty cells as NULL', async () => {
      const name = uniqueName();
      const csv =
        'i,d,b,s\n+7,.5,TRUE,x\n9223372036854775807,2.,False,\n-9223372036854775808,-3e2,true,y\n0,1E5,,z\n,-0.25,false,\n';
      const response = await upload(testApp, user, name, csv);
      expect(response.status).toBe(201);
      expect(response.body.columns.map((column: { type: string }) => column.type)).toEqual([
        'INTEGER',
        'DOUBLE',
        'BOOLEAN',
        'STRING',
      ]);
      const rows = await allRows(testApp, user, name);
      expect(rows.map((row) => row.d)).toEqual([0.5, 2, -300, 100000, -0.25]);
      expect(rows.map((row) => row.b)).toEqual([true, false, true, null, false]);
      expect(rows.map((row) => row.s)).toEqual(['x', null, 'y', 'z', null]);
      expect(rows[0].i).toBe(7);
      expect(String(rows[1].i)).toBe('9223372036854775807');
      expect(String(rows[2].i)).toBe('-9223372036854775808');
      expect(rows[4].i).toBeNull();
      await upload(testApp, user, name, 'd,i,b,s\n3,1,true,\n').expect(200);
      expect((await allRows(testApp, user, name))[5]).toEqual({ i: 1, d: 3, b: true, s: null });
    });

    it('answers 409 naming the index and a value repeated within an appended file, and loads nothing', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,v\n1,a\n2,b\n', { indexes: 'id,true;v,false' }).expect(201);
      const rows = Array.from({ length: 3000 }, (_, index) => `${index + 10},n${index}`);
      rows.push('2500,again');
      const response = await upload(testApp, user, name, `id,v\n${rows.join('\n')}\n`);
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('UNIQUE_VIOLATION');
      expect(response.body.message).toMatch(/ux_id/);
      expect(response.body.message).toMatch(/"2500"/);
      expect(response.body.details[0]).toMatchObject({ index: 'ux_id', value: '2500' });
      expect(await allRows(testApp, user, name)).toEqual([
        { id: 1, v: 'a' },
        { id: 2, v: 'b' },
      ]);
      expect(await stagingTables(testApp, user, name)).toEqual([]);
    });

    it('answers 409 naming the index and the value an append repeats from the collection, and loads nothing', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,code\n1,A\n2,B\n', { indexes: 'code,true' }).expect(201);
      const response = await upload(testApp, user, name, 'id,code\n3,C\n4,b\n5,B\n6,D\n');
      expect(response.status).toBe(409);
      expect(response.body.code).toBe('UNIQUE_VIOLATION');
      expect(response.body.details[0]).toMatchObject({ index: 'ux_code', value: 'B' });
      expect((await allRows(testApp, user, name)).length).toBe(2);
      expect(await stagingTables(testApp, user, name)).toEqual([]);
    });

    it('lets NULLs repeat in a unique column, and appends in load order after the existing rows', async () => {
      const name = uniqueName();
      await upload(testApp, user, name, 'id,k\n1,\n2,x\n', { indexes: 'k,true' }).expect(201);
      const more = Array.from({ length: 2500 }, (_, index) => `${index + 3},${index % 2 === 0 ? '' : `k${index}`}`);
      const response = await upload(testApp, user, name, `id,k\n${more.join('\n')}\n`);
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ rowsLoaded: 2500, rowCount: 2502 });
      const rows = await allRows(testApp, user, name);
      expect(rows.map((row) => row.id)).toEqual(Array.from({ length: 2502 }, (_, index) => index + 1));
      expect(rows.filter((row) => row.k === null).length).toBe(1251);
      expect(await stagingTables(testApp, user, name)).toEqual([]);
    });

    if (fast) {
      it('treats a LOAD DATA that writes fewer rows than were sent as a failure and keeps nothing (create)', async () => {
        const name = uniqueName();
        const before = await collectionTables(testApp);
        store.loseOneRow = true;
        const response = await upload(testApp, user, name, 'id\n1\n2\n3\n');
        expect(response.status).toBe(500);
        await getRows(testApp, user, name).expect(404);
        expect(await collectionTables(testApp)).toEqual(before);
      });

      it('treats a LOAD DATA that writes fewer rows than were sent as a failure and keeps nothing (append)', async () => {
        const name = uniqueName();
        await upload(testApp, user, name, 'id\n1\n').expect(201);
        store.loseOneRow = true;
        const response = await upload(testApp, user, name, 'id\n2\n3\n', { indexes: 'id,true' });
        expect(response.status).toBe(500);
        expect(await allRows(testApp, user, name)).toEqual([{ id: 1 }]);
        expect((await request(testApp.app).get(`/api/internaldata/indexes/${name}`).set(bearer(user))).body).toEqual(
          [],
        );
        expect(await stagingTables(testApp, user, name)).toEqual([]);
      });

      it('falls back to INSERTs when the server refuses LOAD DATA LOCAL although @@local_infile said ON', async () => {
        const name = uniqueName();
        store.refuseLocal = true;
        store.reset();
        try {
          await upload(testApp, user, name, 'id,v\n1,a\n2,b\n', { indexes: 'id,true' }).expect(201);
          await upload(testApp, user, name, 'id,v\n3,c\n').expect(200);
          const duplicate = await upload(testApp, user, name, 'id,v\n4,d\n1,again\n');
          expect(duplicate.status).toBe(409);
          expect(duplicate.body.details[0]).toMatchObject({ index: 'ux_id', value: '1' });
        } finally {
          store.refuseLocal = false;
        }
        expect(store.localLoads).toBe(3);
        expect(store.insertStatements).toBeGreaterThan(0);
        expect(await allRows(testApp, user, name)).toEqual([
          { id: 1, v: 'a' },
          { id: 2, v: 'b' },
          { id: 3, v: 'c' },
        ]);
        expect(await stagingTables(testApp, user, name)).toEqual([]);
      });
    }
  });
});
