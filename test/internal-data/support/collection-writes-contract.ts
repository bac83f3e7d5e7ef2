import { describe, expect, it } from '@jest/globals';
import { ER_DUP_ENTRY, mysqlErrno } from '../../../src/db/mysql-errors.js';
import { tableName } from '../../../src/internal-data/collection-rules.js';
import type { ColumnSpec } from '../../../src/internal-data/column-types.js';
import type { CollectionStore } from '../../../src/internal-data/internal-data-store-type.js';

/** What the fake and InternalDataStore both do when collections are written (one suite, every implementation). */
export interface CollectionWritesUnderTest {
  store: CollectionStore;
  newOwner(): Promise<{ id: number; username: string }>;
  /** A unique table name of this test (dropped by the suite). */
  tableName(): string;
}

const COLUMNS: ColumnSpec[] = [
  { name: 'id', type: 'INTEGER', nullable: false, sqlType: 'BIGINT' },
  { name: 'name', type: 'STRING', nullable: true, sqlType: 'VARCHAR(255)' },
];

async function failure(work: Promise<unknown>): Promise<{ errno?: number; message: string }> {
  return work.then(
    () => ({ message: 'no error' }),
    (error: unknown) => ({ errno: mysqlErrno(error), message: (error as Error).message }),
  );
}

export function collectionWritesContract(label: string, setUp: () => CollectionWritesUnderTest): void {
  describe(`${label} (CollectionWrites contract)`, () => {
    it('reserves a name unseen by others until commit, and leaves nothing after a rollback', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const trx = await store.begin();
      const id = await store.insertEntry(trx, { ownerId: owner.id, name: 'fresh', fileName: 'a.csv' });
      expect(await store.find(owner.id, 'fresh')).toBeUndefined();
      expect(await store.findForUpdate(trx, owner.id, 'fresh')).toMatchObject({
        id,
        name: 'fresh',
        rowCount: 0,
        columns: [],
        table: tableName(id),
      });
      await store.updateEntry(trx, id, { columns: COLUMNS, rowCount: 2, fileName: 'b.csv' });
      await store.commit(trx);
      expect(await store.find(owner.id, 'fresh')).toMatchObject({
        id,
        owner: owner.username,
        columns: COLUMNS,
        rowCount: 2,
        fileName: 'b.csv',
      });

      const undone = await store.begin();
      await store.insertEntry(undone, { ownerId: owner.id, name: 'undone', fileName: 'c.csv' });
      await store.deleteEntry(undone, id);
      await store.rollback(undone);
      expect(await store.find(owner.id, 'undone')).toBeUndefined();
      expect((await store.list(owner.id)).map((c) => c.name)).toEqual(['fresh']);
    });

    it('refuses a name the owner has with ER_DUP_ENTRY, and deletes an entry on commit', async () => {
      const { store, newOwner } = setUp();
      const owner = await newOwner();
      const trx = await store.begin();
      const id = await store.insertEntry(trx, { ownerId: owner.id, name: 'taken', fileName: 'a.csv' });
      await store.commit(trx);
      const again = await store.begin();
      expect(
        (await failure(store.insertEntry(again, { ownerId: owner.id, name: 'taken', fileName: 'b.csv' }))).errno,
      ).toBe(ER_DUP_ENTRY);
      await store.rollback(again);
      const removal = await store.begin();
      await store.deleteEntry(removal, id);
      await store.commit(removal);
      expect(await store.find(owner.id, 'taken')).toBeUndefined();
    });

    it('refuses a value a unique index holds: the whole statement, with ER_DUP_ENTRY naming the value and the index', async () => {
      const { store, tableName: newTable } = setUp();
      const table = newTable();
      await store.createTable(table, COLUMNS);
      await store.addIndex(table, { name: 'ux_name', column: 'name', unique: true });
      await store.insertRows(undefined, {
        table,
        columns: ['id', 'name'],
        firstRowId: 1,
        rows: [
          ['1', 'Ann'],
          ['2', null],
          ['3', null],
        ],
      });
      const refused = await failure(
        store.insertRows(undefined, {
          table,
          columns: ['id', 'name'],
          firstRowId: 4,
          rows: [
            ['4', 'Bob'],
            ['5', 'Ann'],
          ],
        }),
      );
      expect(refused.errno).toBe(ER_DUP_ENTRY);
      expect(refused.message).toMatch(/Duplicate entry 'Ann' for key 'ux_name'/);
      expect(await store.count(table, [])).toBe(3);
      await store.insertRows(undefined, { table, columns: ['id', 'name'], firstRowId: 4, rows: [['4', 'ann']] });
      expect((await store.page(table, ['name'], [], 10, 0)).map((row) => row.name)).toEqual(['Ann', null, null, 'ann']);
    });

    it('refuses a unique index over duplicated values, adding none of a group; drops an index', async () => {
      const { store, tableName: newTable } = setUp();
      const table = newTable();
      await store.createTable(table, COLUMNS);
      await store.insertRows(undefined, {
        table,
        columns: ['id', 'name'],
        firstRowId: 1,
        rows: [
          ['1', 'Ann'],
          ['2', 'Ann'],
        ],
      });
      const refused = await failure(store.addIndex(table, { name: 'ux_name', column: 'name', unique: true }));
      expect(refused.errno).toBe(ER_DUP_ENTRY);
      expect(refused.message).toMatch(/Duplicate entry 'Ann' for key 'ux_name'/);
      expect(
        (
          await failure(
            store.addIndexes(table, [
              { name: 'ix_id', columns: ['id'], unique: false },
              { name: 'ux_name', columns: ['name'], unique: true },
            ]),
          )
        ).errno,
      ).toBe(ER_DUP_ENTRY);
      expect(await store.indexes(table)).toEqual([]);
      await store.addIndexes(table, [
        { name: 'ux_id', columns: ['id'], unique: true },
        { name: 'ix_name', columns: ['name'], unique: false },
      ]);
      expect((await store.indexes(table)).map((i) => i.name)).toEqual(['ix_name', 'ux_id']);
      await store.dropIndex(table, 'ix_name');
      expect((await store.indexes(table)).map((i) => i.name)).toEqual(['ux_id']);
    });

    it('keeps rows inserted inside a transaction from others until commit, counts them in maxRowId, and drops them on rollback', async () => {
      const { store, tableName: newTable } = setUp();
      const table = newTable();
      await store.createTable(table, COLUMNS);
      await store.insertRows(undefined, { table, columns: ['id', 'name'], firstRowId: 1, rows: [['1', 'a']] });
      const trx = await store.begin();
      expect(await store.maxRowId(trx, table)).toBe(1);
      await store.insertRows(trx, {
        table,
        columns: ['name', 'id'],
        firstRowId: 2,
        rows: [
          ['b', '2'],
          ['c', '3'],
        ],
      });
      expect(await store.maxRowId(trx, table)).toBe(3);
      expect(await store.count(table, [])).toBe(1);
      await store.rollback(trx);
      expect(await store.count(table, [])).toBe(1);
      const kept = await store.begin();
      await store.insertRows(kept, { table, columns: ['name', 'id'], firstRowId: 2, rows: [['b', '2']] });
      await store.commit(kept);
      expect(await store.page(table, ['id', 'name'], [], 10, 0)).toEqual([
        { id: 1, name: 'a' },
        { id: 2, name: 'b' },
      ]);
    });

    it('answers tables no entry owns as orphans once older than asked, and drops a table', async () => {
      const { store, newOwner, tableName: newTable } = setUp();
      const owner = await newOwner();
      const orphan = newTable();
      await store.createTable(orphan, COLUMNS);
      const trx = await store.begin();
      const id = await store.insertEntry(trx, { ownerId: owner.id, name: 'owned', fileName: 'a.csv' });
      await store.createTable(tableName(id), COLUMNS);
      await store.commit(trx);
      expect(await store.orphanTables(3600)).not.toContain(orphan);
      await new Promise((resolve) => setTimeout(resolve, 2100));
      const orphans = await store.orphanTables(1);
      expect(orphans).toContain(orphan);
      expect(orphans).not.toContain(tableName(id));
      await store.dropTable(orphan);
      await store.dropTable(orphan);
      expect(await store.orphanTables(1)).not.toContain(orphan);
      await store.dropTable(tableName(id));
    });
  });
}
