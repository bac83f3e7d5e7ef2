import { describe, expect, it } from '@jest/globals';
import { CollectionReader } from '../../src/internal-data/collection-reader.js';
import type { ColumnSpec } from '../../src/internal-data/column-types.js';
import type { CollectionReads } from '../../src/internal-data/internal-data-store-type.js';
import { FakeInternalDataStore } from './support/fake-internal-data-store.js';

/** The read operations of internal data on the in-memory reads (held to InternalDataStore's contract: collection-reads.test.ts). */
const ALICE = { id: 1, username: 'alice' };
const COLUMNS: ColumnSpec[] = [
  { name: 'Id', type: 'INTEGER', nullable: false, sqlType: 'BIGINT' },
  { name: 'active', type: 'BOOLEAN', nullable: true, sqlType: 'BOOLEAN' },
  { name: 'city', type: 'STRING', nullable: true, sqlType: 'VARCHAR(255)' },
];

function customers() {
  const reads = new FakeInternalDataStore();
  reads.addCollection(
    ALICE,
    'customers',
    COLUMNS,
    [
      ['1', '1', 'Oslo'],
      ['2', '0', null],
      ['3', '1', 'Bergen'],
    ],
    [{ name: 'ux_Id', columns: ['Id'], unique: true }],
  );
  return { reads, reader: new CollectionReader(reads) };
}

describe('CollectionReader on the in-memory reads', () => {
  it("lists and describes the owner's collections", async () => {
    const { reader } = customers();
    expect(await reader.list(ALICE.id)).toEqual([
      {
        name: 'customers',
        owner: 'alice',
        rowCount: 3,
        fileName: 'customers.csv',
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
        columns: [
          { name: 'Id', type: 'INTEGER', nullable: false },
          { name: 'active', type: 'BOOLEAN', nullable: true },
          { name: 'city', type: 'STRING', nullable: true },
        ],
      },
    ]);
    expect(await reader.list(2)).toEqual([]);
    expect(await reader.indexes(ALICE.id, 'customers')).toEqual([{ name: 'ux_Id', columns: ['Id'], unique: true }]);
  });

  it('answers 404 for a collection the owner does not have, and 400 for a name that cannot be one', async () => {
    const { reader } = customers();
    await expect(reader.get(2, 'customers')).rejects.toMatchObject({ status: 404, code: 'COLLECTION_NOT_FOUND' });
    await expect(reader.columns(ALICE.id, 'Customers')).rejects.toMatchObject({ status: 404 });
    await expect(reader.get(ALICE.id, '1bad name')).rejects.toMatchObject({ status: 400 });
  });

  it('pages rows with booleans as booleans, the registry count as total, and filters by column name ignoring case', async () => {
    const { reader } = customers();
    expect(await reader.rows(ALICE.id, 'customers', { limit: 2 })).toEqual({
      collection: 'customers',
      limit: 2,
      offset: 0,
      total: 3,
      rows: [
        { Id: 1, active: true, city: 'Oslo' },
        { Id: 2, active: false, city: null },
      ],
    });
    const active = await reader.rows(ALICE.id, 'customers', { filter: { ACTIVE: 'true' } });
    expect([active.total, active.rows.map((row) => row.Id)]).toEqual([2, [1, 3]]);
    expect((await reader.rows(ALICE.id, 'customers', { filter: { city: '' } })).rows.map((row) => row.Id)).toEqual([2]);
    expect((await reader.rows(ALICE.id, 'customers', { filter: { id: '3' }, offset: 0 })).rows).toEqual([
      { Id: 3, active: true, city: 'Bergen' },
    ]);
  });

  it('refuses bad page bounds and filters with 400 naming the parameter', async () => {
    const { reader } = customers();
    await expect(reader.rows(ALICE.id, 'customers', { limit: 0 })).rejects.toMatchObject({
      status: 400,
      details: [{ path: 'query.limit' }],
    });
    await expect(reader.rows(ALICE.id, 'customers', { limit: 10_001 })).rejects.toMatchObject({ status: 400 });
    await expect(reader.rows(ALICE.id, 'customers', { offset: -1 })).rejects.toMatchObject({
      status: 400,
      details: [{ path: 'query.offset' }],
    });
    await expect(reader.rows(ALICE.id, 'customers', { filter: { nope: '1', Id: 'x' } })).rejects.toMatchObject({
      status: 400,
      code: 'VALIDATION_FAILED',
      details: [{ path: 'query.filter[nope]' }, { path: 'query.filter[Id]' }],
    });
  });

  it('answers 404 when the collection is deleted between reading its entry and its rows', async () => {
    const { reads } = customers();
    const racing: CollectionReads = {
      list: (ownerId) => reads.list(ownerId),
      find: async (ownerId, name) => {
        const found = await reads.find(ownerId, name);
        reads.dropCollection(ownerId, name);
        return found;
      },
      indexes: (table) => reads.indexes(table),
      page: (...args) => reads.page(...args),
      count: (...args) => reads.count(...args),
    };
    await expect(new CollectionReader(racing).rows(ALICE.id, 'customers', {})).rejects.toMatchObject({
      status: 404,
      code: 'COLLECTION_NOT_FOUND',
    });
  });
});
