import { describe, expect, it } from '@jest/globals';
import { mysqlErrno, ER_NO_SUCH_TABLE } from '../../../src/db/mysql-errors.js';
import type { ColumnSpec } from '../../../src/internal-data/column-types.js';
import type { CollectionReads } from '../../../src/internal-data/internal-data-store-type.js';
import type { CollectionRecord } from '../../../src/internal-data/internal-data-store.js';
import type { CellValue } from '../../../src/internal-data/row-encoder.js';

/**
 * What the fake and InternalDataStore both answer when collections are read (one suite, every
 * implementation). `newCollection` makes a collection the way a load does (rows as the row encoder writes
 * them, indexes by column); `drop` deletes one the way the service does.
 */
export interface CollectionReadsUnderTest {
  reads: CollectionReads;
  newOwner(): Promise<{ id: number; username: string }>;
  newCollection(
    owner: { id: number; username: string },
    name: string,
    columns: ColumnSpec[],
    rows: CellValue[][],
    indexes?: Array<{ column: string; unique: boolean }>,
  ): Promise<CollectionRecord>;
  drop(record: CollectionRecord): Promise<void>;
}

const COLUMNS: ColumnSpec[] = [
  { name: 'id', type: 'INTEGER', nullable: false, sqlType: 'BIGINT' },
  { name: 'score', type: 'DOUBLE', nullable: true, sqlType: 'DOUBLE' },
  { name: 'active', type: 'BOOLEAN', nullable: true, sqlType: 'BOOLEAN' },
  { name: 'name', type: 'STRING', nullable: true, sqlType: 'VARCHAR(255)' },
];
const ROWS: CellValue[][] = [
  ['3', '0.5', '1', 'Ann'],
  ['1', null, '0', 'ann'],
  ['9007199254740993', '2.25', null, null],
  ['2', '-1.0', '1', 'Bob'],
];

export function collectionReadsContract(label: string, setUp: () => CollectionReadsUnderTest): void {
  describe(`${label} (CollectionReads contract)`, () => {
    it("lists the owner's collections in binary name order with their registry fields, and finds one by its exact name", async () => {
      const { reads, newOwner, newCollection } = setUp();
      const [owner, other] = [await newOwner(), await newOwner()];
      for (const name of ['b', 'B', 'a']) await newCollection(owner, name, COLUMNS, ROWS.slice(0, 1));
      await newCollection(other, 'a', COLUMNS, []);
      const listed = await reads.list(owner.id);
      expect(listed.map((c) => c.name)).toEqual(['B', 'a', 'b']);
      expect(listed[1]).toEqual({
        id: expect.any(Number),
        ownerId: owner.id,
        owner: owner.username,
        name: 'a',
        table: `idc_${listed[1].id}`,
        columns: COLUMNS,
        rowCount: 1,
        fileName: 'a.csv',
        createdAt: expect.any(Date),
        updatedAt: expect.any(Date),
      });
      expect(await reads.find(owner.id, 'a')).toEqual(listed[1]);
      expect(await reads.find(owner.id, 'A')).toBeUndefined();
      expect((await reads.find(other.id, 'a'))?.ownerId).toBe(other.id);
    });

    it('pages rows in load order with the values MySQL answers for each column type', async () => {
      const { reads, newOwner, newCollection } = setUp();
      const record = await newCollection(await newOwner(), 'people', COLUMNS, ROWS);
      const names = COLUMNS.map((c) => c.name);
      expect(await reads.page(record.table, names, [], 10, 0)).toEqual([
        { id: 3, score: 0.5, active: 1, name: 'Ann' },
        { id: 1, score: null, active: 0, name: 'ann' },
        { id: '9007199254740993', score: 2.25, active: null, name: null },
        { id: 2, score: -1, active: 1, name: 'Bob' },
      ]);
      expect(await reads.page(record.table, ['name'], [], 2, 1)).toEqual([{ name: 'ann' }, { name: null }]);
      expect(await reads.page(record.table, names, [], 10, 4)).toEqual([]);
      expect(await reads.count(record.table, [])).toBe(4);
      await expect(reads.page(record.table, names, [], 1e21, 0)).rejects.toBeInstanceOf(RangeError);
      await expect(reads.page(record.table, names, [], 1, -1)).rejects.toBeInstanceOf(RangeError);
    });

    it('filters by equality with typed values (strings exactly, booleans, bigints beyond 2^53) and by NULL', async () => {
      const { reads, newOwner, newCollection } = setUp();
      const record = await newCollection(await newOwner(), 'people', COLUMNS, ROWS);
      const ids = async (filters: Array<{ column: string; value: unknown }>) =>
        (await reads.page(record.table, ['id'], filters, 10, 0)).map((row) => row.id);
      expect(await ids([{ column: 'name', value: 'ann' }])).toEqual([1]);
      expect(await ids([{ column: 'active', value: true }])).toEqual([3, 2]);
      expect(
        await ids([
          { column: 'active', value: true },
          { column: 'name', value: 'Bob' },
        ]),
      ).toEqual([2]);
      expect(await ids([{ column: 'id', value: 9007199254740993n }])).toEqual(['9007199254740993']);
      expect(await ids([{ column: 'score', value: 0.5 }])).toEqual([3]);
      expect(await ids([{ column: 'score', value: null }])).toEqual([1]);
      expect(await ids([{ column: 'name', value: 'nobody' }])).toEqual([]);
      expect(await reads.count(record.table, [{ column: 'active', value: false }])).toBe(1);
      expect(await reads.count(record.table, [{ column: 'name', value: null }])).toBe(1);
    });

    it("lists a table's indexes by name, the primary key excepted", async () => {
      const { reads, newOwner, newCollection } = setUp();
      const record = await newCollection(await newOwner(), 'indexed', COLUMNS, ROWS, [
        { column: 'name', unique: false },
        { column: 'id', unique: true },
      ]);
      expect(await reads.indexes(record.table)).toEqual([
        { name: 'ix_name', columns: ['name'], unique: false },
        { name: 'ux_id', columns: ['id'], unique: true },
      ]);
      const plain = await newCollection(await newOwner(), 'plain', COLUMNS, []);
      expect(await reads.indexes(plain.table)).toEqual([]);
    });

    it('fails with ER_NO_SUCH_TABLE on a table whose collection was deleted', async () => {
      const { reads, newOwner, newCollection, drop } = setUp();
      const owner = await newOwner();
      const record = await newCollection(owner, 'gone', COLUMNS, ROWS);
      await drop(record);
      expect(await reads.find(owner.id, 'gone')).toBeUndefined();
      for (const read of [
        () => reads.page(record.table, ['id'], [], 1, 0),
        () => reads.count(record.table, []),
        () => reads.indexes(record.table),
      ]) {
        expect(
          mysqlErrno(
            await read().then(
              () => undefined,
              (error: unknown) => error,
            ),
          ),
        ).toBe(ER_NO_SUCH_TABLE);
      }
    });
  });
}
