import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { InternalDataService } from '../../src/internal-data/internal-data-service.js';
import { createLogger } from '../../src/logger.js';
import { FakeInternalDataStore } from './support/fake-internal-data-store.js';

/**
 * Loads and deletes of collections on the in-memory store (held to InternalDataStore's contracts:
 * collection-reads.test.ts, collection-writes.test.ts), through the INSERT path the service takes when the
 * server has no LOAD DATA LOCAL. test/internal-data/load-collection.test.ts runs both paths on MariaDB.
 */
const ALICE = { id: 1, username: 'alice' };
const directory = mkdtempSync(join(tmpdir(), 'internal-data-unit-'));
let files = 0;
function csv(text: string): string {
  const path = join(directory, `f${++files}.csv`);
  writeFileSync(path, text);
  return path;
}

function service() {
  const store = new FakeInternalDataStore().addOwner(ALICE.id, ALICE.username);
  const invalidated: string[] = [];
  const subject = new InternalDataService(
    store,
    { invalidate: (_owner, name) => invalidated.push(name) },
    createLogger('silent'),
  );
  return {
    store,
    invalidated,
    subject,
    load: (collection: string, text: string, indexes?: string) =>
      subject.load({ ownerId: ALICE.id, collection, fileName: `${collection}.csv`, path: csv(text), indexes }),
  };
}

describe('InternalDataService on the in-memory store', () => {
  it('creates a collection from a CSV with typed columns and its indexes, then appends to it', async () => {
    const { subject, load, invalidated } = service();
    const created = await load('customers', 'id,name,active\n1,Ann,true\n2,Bob,false\n', 'id,true;name,false');
    expect(created).toMatchObject({
      collection: 'customers',
      created: true,
      rowsLoaded: 2,
      rowCount: 2,
      columns: [
        { name: 'id', type: 'INTEGER', nullable: false },
        { name: 'name', type: 'STRING', nullable: false },
        { name: 'active', type: 'BOOLEAN', nullable: false },
      ],
      indexes: [
        { name: 'ix_name', columns: ['name'], unique: false },
        { name: 'ux_id', columns: ['id'], unique: true },
      ],
    });
    const appended = await load('customers', 'name,id,active\nCid,3,\n', undefined);
    expect(appended).toMatchObject({ created: false, rowsLoaded: 1, rowCount: 3 });
    expect(appended.columns.find((c) => c.name === 'active')?.nullable).toBe(true);
    expect((await subject.rows(ALICE.id, 'customers', {})).rows).toEqual([
      { id: 1, name: 'Ann', active: true },
      { id: 2, name: 'Bob', active: false },
      { id: 3, name: 'Cid', active: null },
    ]);
    expect(invalidated).toEqual(['customers', 'customers']);
  });

  it('loads nothing of a file that repeats a unique value: 409 UNIQUE_VIOLATION naming the index and value', async () => {
    const { subject, load } = service();
    await expect(load('people', 'id,name\n1,Ann\n1,Bob\n', 'id,true')).rejects.toMatchObject({
      status: 409,
      code: 'UNIQUE_VIOLATION',
      details: [{ index: 'ux_id', value: '1' }],
    });
    expect(await subject.list(ALICE.id)).toEqual([]);
    await load('people', 'id,name\n1,Ann\n', 'id,true');
    await expect(load('people', 'id,name\n2,Bea\n1,Bob\n')).rejects.toMatchObject({
      status: 409,
      code: 'UNIQUE_VIOLATION',
    });
    expect((await subject.rows(ALICE.id, 'people', {})).rows).toEqual([{ id: 1, name: 'Ann' }]);
    expect((await subject.get(ALICE.id, 'people')).rowCount).toBe(1);
  });

  it('refuses an append whose header or values do not fit the collection (400), changing nothing', async () => {
    const { subject, load } = service();
    await load('scores', 'id,score\n1,0.5\n');
    await expect(load('scores', 'id,points\n2,1\n')).rejects.toMatchObject({ status: 400, code: 'COLUMNS_MISMATCH' });
    await expect(load('scores', 'id,score\nx,1\n')).rejects.toMatchObject({ status: 400, code: 'INVALID_CSV' });
    expect((await subject.get(ALICE.id, 'scores')).rowCount).toBe(1);
  });

  it('deletes a collection: its entry and its table', async () => {
    const { subject, load, store } = service();
    await load('gone', 'id\n1\n');
    const { table } = await subject.get(ALICE.id, 'gone');
    await subject.delete(ALICE.id, 'gone');
    await expect(subject.get(ALICE.id, 'gone')).rejects.toMatchObject({ status: 404, code: 'COLLECTION_NOT_FOUND' });
    await expect(store.count(table, [])).rejects.toMatchObject({ errno: 1146 });
    await expect(subject.delete(ALICE.id, 'gone')).rejects.toMatchObject({ status: 404 });
  });
});
