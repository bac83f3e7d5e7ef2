import { afterAll, beforeAll } from '@jest/globals';
import { indexName, tableName } from '../../src/internal-data/collection-rules.js';
import { InternalDataStore } from '../../src/internal-data/internal-data-store.js';
import { createTestApp, type TestApp } from '../support/test-app.js';
import { collectionReadsContract } from './support/collection-reads-contract.js';
import { FakeInternalDataStore } from './support/fake-internal-data-store.js';
import { UserStore } from '../../src/auth/user-store.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

collectionReadsContract('InternalDataStore', () => {
  const store = new InternalDataStore(t.services.db, new UserStore(t.services.db));
  return {
    reads: store,
    newOwner: () => t.newUser(),
    // As the service's load does: the entry reserved in a transaction, the table and its indexes, the rows, the entry completed.
    async newCollection(owner, name, columns, rows, indexes = []) {
      const trx = await store.begin();
      const id = await store.insertEntry(trx, { ownerId: owner.id, name, fileName: `${name}.csv` });
      const table = tableName(id);
      await store.createTable(table, columns);
      for (const index of indexes)
        await store.addIndex(table, { name: indexName(index), column: index.column, unique: index.unique });
      await store.insertRows(undefined, { table, columns: columns.map((column) => column.name), firstRowId: 1, rows });
      await store.updateEntry(trx, id, { columns, rowCount: rows.length, fileName: `${name}.csv` });
      await store.commit(trx);
      return (await store.find(owner.id, name))!;
    },
    async drop(record) {
      const trx = await store.begin();
      await store.deleteEntry(trx, record.id);
      await store.commit(trx);
      await store.dropTable(record.table);
    },
  };
});

let owners = 0;
collectionReadsContract('FakeInternalDataStore', () => {
  const reads = new FakeInternalDataStore();
  return {
    reads,
    newOwner: async () => ({ id: ++owners, username: `owner-${owners}` }),
    async newCollection(owner, name, columns, rows, indexes = []) {
      return reads.addCollection(
        owner,
        name,
        columns,
        rows,
        indexes.map((index) => ({ name: indexName(index), columns: [index.column], unique: index.unique })),
      );
    },
    async drop(record) {
      reads.dropCollection(record.ownerId, record.name);
    },
  };
});
