import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { createDatabase } from '../../src/db/database.js';
import { insertStatement, sqlLiteral } from '../../src/db/sql-literals.js';
import { applyTestEnvironment } from '../support/test-environment.js';

let db: Knex;

beforeAll(async () => {
  applyTestEnvironment();
  db = createDatabase(process.env.DATABASE_URL as string, { min: 0, max: 1 });
  await db.raw(
    'CREATE TEMPORARY TABLE literal_check (id INT UNSIGNED NOT NULL, txt LONGTEXT NULL, tag VARCHAR(64) NULL, at TIMESTAMP(3) NULL, n DOUBLE NULL, flag TINYINT(1) NULL) DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin',
  );
});
afterAll(async () => db.destroy());

/** Writes rows with insertStatement and reads them back in id order (one connection: the temporary table is its own). */
async function roundTrip(
  rows: Array<[number, unknown, unknown, unknown, unknown, unknown]>,
): Promise<Array<Record<string, unknown>>> {
  await db.raw('DELETE FROM literal_check');
  await db.raw(insertStatement('literal_check', ['id', 'txt', 'tag', 'at', 'n', 'flag'], rows as never));
  return (await db('literal_check').orderBy('id').select('*')) as Array<Record<string, unknown>>;
}

describe('SQL literals of multi-row inserts', () => {
  it('stores every string exactly as given, whatever quotes, backslashes, placeholders or characters it holds', async () => {
    const texts = [
      "it's",
      'back\\slash',
      "\\'",
      "'); DROP TABLE literal_check; --",
      'a ? b ?? c',
      'line\nbreak\r\n',
      'nul\0byte',
      'ctrl-z \x1a',
      '{"json":"text","quote":"\'","n":[1,2]}',
      'é ü ß 漢字 🙂',
      "X'41'",
      '',
      ' ',
      '"double"',
      '\t\b',
    ];
    const rows = await roundTrip(texts.map((text, index) => [index, text, text.slice(0, 64), null, null, null]));
    expect(rows.map((row) => row.txt)).toEqual(texts);
    expect(rows.map((row) => row.tag)).toEqual(texts.map((text) => text.slice(0, 64)));
  });

  it('stores numbers, booleans, null, buffers and dates to the millisecond (UTC)', async () => {
    const at = new Date('2026-11-23T07:19:17.123Z');
    const rows = await roundTrip([
      [1, Buffer.from('{"a":1}'), null, at, -12.5, true],
      [2, null, 'plain', new Date(at.getTime() + 1), 0, false],
    ]);
    expect(rows).toEqual([
      { id: 1, txt: '{"a":1}', tag: null, at, n: -12.5, flag: 1 },
      { id: 2, txt: null, tag: 'plain', at: new Date(at.getTime() + 1), n: 0, flag: 0 },
    ]);
  });

  it('writes milliseconds with their leading zeros', async () => {
    const dates = [
      '2026-11-23T07:19:17.005Z',
      '2026-11-23T07:19:17.050Z',
      '2026-11-23T07:19:17.000Z',
      '2026-11-23T07:19:18.999Z',
    ].map((text) => new Date(text));
    const rows = await roundTrip(dates.map((at, index) => [index, null, null, at, null, null]));
    expect(rows.map((row) => row.at)).toEqual(dates);
  });

  it('never writes a quote or backslash outside a hexadecimal literal', () => {
    for (const text of ["it's", 'a\\b', 'nul\0', 'ctrl-z \x1a']) expect(sqlLiteral(text)).toMatch(/^X'[0-9a-f]+'$/);
    expect(sqlLiteral('plain "json" text')).toBe(`'plain "json" text'`);
    expect(sqlLiteral('\nid-1\nid-2\r\n')).toBe(`'\nid-1\nid-2\r\n'`);
  });

  it('writes bytes of plain UTF-8 text between quotes, and any other bytes as hex', () => {
    expect(sqlLiteral(Buffer.from('["id",{"a":"é 🙂"}]'))).toBe(`'["id",{"a":"é 🙂"}]'`);
    expect(sqlLiteral(Buffer.from('line\nbreak\r\n'))).toBe(`'line\nbreak\r\n'`);
    for (const bytes of [
      Buffer.from("it's"),
      Buffer.from('a\\b'),
      Buffer.from('nul\0'),
      Buffer.from('ctrl-z \x1a'),
      Buffer.from([0x00, 0x00, 0x01, 0x2c]),
      Buffer.from([0x61, 0xc3]),
      Buffer.from([0xff, 0xfe]),
    ])
      expect(sqlLiteral(bytes)).toBe(`X'${bytes.toString('hex')}'`);
    expect(sqlLiteral(Buffer.alloc(0))).toBe("''");
  });

  it('stores bytes in a binary column exactly as given, quoted or as hex', async () => {
    await db.raw('CREATE TEMPORARY TABLE bytes_check (id INT UNSIGNED NOT NULL, b LONGBLOB NULL)');
    const values = [
      Buffer.from('["id",{"a":"é 🙂"}]'),
      Buffer.from("it's \\ \n"),
      Buffer.from('\nline\r\nbreaks\n'),
      Buffer.from([0x00, 0xff, 0x27, 0x5c, 0x80]),
      Buffer.from([0x00, 0x00, 0x01, 0x2c]),
      Buffer.alloc(0),
    ];
    await db.raw(
      insertStatement(
        'bytes_check',
        ['id', 'b'],
        values.map((bytes, id) => [id, bytes]),
      ),
    );
    const rows = (await db('bytes_check').orderBy('id').select('b')) as Array<{ b: Buffer }>;
    expect(rows.map((row) => row.b.toString('hex'))).toEqual(values.map((bytes) => bytes.toString('hex')));
  });

  it('refuses what has no SQL literal or is not a plain identifier', () => {
    expect(() => sqlLiteral(Number.NaN)).toThrow();
    expect(() => sqlLiteral(new Date(Number.NaN))).toThrow();
    expect(() => insertStatement('literal_check; --', ['id'], [[1]])).toThrow(/identifier/);
    expect(() => insertStatement('literal_check', ['id', 'txt'], [[1]])).toThrow(/2 columns/);
  });
});

describe('statements without values', () => {
  it('are sent as written, and statements with values are still formatted', async () => {
    const [[plain]] = (await db.raw("SELECT 'a ? b' AS text")) as [[{ text: string }]];
    expect(plain.text).toBe('a ? b');
    const [[bound]] = (await db.raw('SELECT ? AS text, ?? AS id FROM (SELECT 1 AS id) AS t', ["it's ?", 'id'])) as [
      [{ text: string; id: number }],
    ];
    expect(bound).toEqual({ text: "it's ?", id: 1 });
    expect(await db('literal_check').where('tag', 'no?such').count({ n: '*' })).toEqual([{ n: 0 }]);
  });
});
