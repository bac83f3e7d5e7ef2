import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import knex, { type Knex } from 'knex';
import { knexConfig } from '../../src/db/database.js';
import { InternalDataService } from '../../src/internal-data/internal-data-service.js';
import {
  InternalDataStore,
  type CollectionRecord,
  type IndexRecord,
} from '../../src/internal-data/internal-data-store.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { allRows, getRows, uniqueName, upload } from './support/collections.js';
import { UserStore } from '../../src/auth/user-store.js';

let dir: string;
let testApp: TestApp;
let user: TestUser;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'load-conflict-'));
  testApp = await createTestApp();
  user = await testApp.newUser();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await testApp.close();
});

async function csvFile(name: string, text: string): Promise<string> {
  const path = join(dir, `${name}.csv`);
  await writeFile(path, text);
  return path;
}

function mysqlError(errno: number, code: string, message: string): Error {
  return Object.assign(new Error(message), { errno, code });
}

describe('concurrency conflicts during loads', () => {
  it('answers 409 LOAD_CONFLICT when the collection stays locked by another load past the lock wait timeout', async () => {
    const name = uniqueName();
    await upload(testApp, user, name, 'id\n1\n').expect(201);
    // A service whose connections give up on a lock after one second, as a busy server would after its timeout.
    const impatient: Knex = knex({
      ...knexConfig(testApp.config.databaseUrl, { min: 0, max: 4 }),
      pool: {
        min: 0,
        max: 4,
        afterCreate: (
          connection: { query: (sql: string, done: (error: Error | null) => void) => void },
          done: (error: Error | null, connection: unknown) => void,
        ) => connection.query('SET SESSION innodb_lock_wait_timeout = 1', (error) => done(error, connection)),
      },
    } as Knex.Config);
    const holder = await testApp.services.db.transaction();
    try {
      // Another load of the same collection holds its registry row.
      await holder('internal_collections').where({ owner_id: user.id, name }).forUpdate().select('id');
      const service = new InternalDataService(
        new InternalDataStore(impatient, new UserStore(impatient)),
        testApp.services.collectionLookups,
        testApp.services.logger,
      );
      const error = await service
        .load({ ownerId: user.id, collection: name, fileName: 'more.csv', path: await csvFile(name, 'id\n2\n') })
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ status: 409, code: 'LOAD_CONFLICT', message: expect.stringContaining(name) });
    } finally {
      await holder.rollback();
      await impatient.destroy();
    }
    expect(await allRows(testApp, user, name)).toEqual([{ id: 1 }]);
  });

  it('answers 409 LOAD_CONFLICT when the database reports a deadlock, and keeps the collection as it was', async () => {
    const name = uniqueName();
    await upload(testApp, user, name, 'id\n1\n').expect(201);
    class DeadlockingStore extends InternalDataStore {
      override async findForUpdate(): Promise<CollectionRecord | undefined> {
        throw mysqlError(
          1213,
          'ER_LOCK_DEADLOCK',
          'Deadlock found when trying to get lock; try restarting transaction',
        );
      }
    }
    const service = new InternalDataService(
      new DeadlockingStore(testApp.services.db, new UserStore(testApp.services.db)),
      testApp.services.collectionLookups,
      testApp.services.logger,
    );
    const error = await service
      .load({ ownerId: user.id, collection: name, fileName: 'more.csv', path: await csvFile(name, 'id\n2\n') })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 409, code: 'LOAD_CONFLICT' });
    expect(await allRows(testApp, user, name)).toEqual([{ id: 1 }]);
  });

  it("answers 409 LOAD_CONFLICT when a delete drops the collection's table while the load runs, and leaves nothing behind", async () => {
    const name = uniqueName();
    await upload(testApp, user, name, 'id\n1\n').expect(201);
    // The delete won the race: by the time the rows are copied in, the collection's table is gone.
    class DroppedUnderneathStore extends InternalDataStore {
      override async insertFromStaging(): Promise<number> {
        throw mysqlError(1146, 'ER_NO_SUCH_TABLE', "Table 'scoring.idc_1' doesn't exist");
      }

      override async insertRows(): Promise<void> {
        throw mysqlError(1146, 'ER_NO_SUCH_TABLE', "Table 'scoring.idc_1' doesn't exist");
      }
    }
    const service = new InternalDataService(
      new DroppedUnderneathStore(testApp.services.db, new UserStore(testApp.services.db)),
      testApp.services.collectionLookups,
      testApp.services.logger,
    );
    const error = await service
      .load({ ownerId: user.id, collection: name, fileName: 'more.csv', path: await csvFile(name, 'id\n2\n') })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 409, code: 'LOAD_CONFLICT', message: expect.stringContaining('deleted') });
    expect(await allRows(testApp, user, name)).toEqual([{ id: 1 }]);
  });

  it('answers 409 LOAD_CONFLICT, not NAME_TAKEN, when other loads keep taking and dropping a new name', async () => {
    const name = uniqueName();
    // Every time this load tries to create the collection another request has just created it,
    // and every time it looks for it to append, that one has been deleted again.
    class RacedStore extends InternalDataStore {
      override async find(): Promise<CollectionRecord | undefined> {
        return undefined;
      }

      override async insertEntry(): Promise<number> {
        throw mysqlError(
          1062,
          'ER_DUP_ENTRY',
          `Duplicate entry '${user.id}-${name}' for key 'internal_collections_owner_id_name_unique'`,
        );
      }
    }
    const service = new InternalDataService(
      new RacedStore(testApp.services.db, new UserStore(testApp.services.db)),
      testApp.services.collectionLookups,
      testApp.services.logger,
    );
    const error = await service
      .load({ ownerId: user.id, collection: name, fileName: 'f.csv', path: await csvFile(name, 'id\n1\n') })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 409, code: 'LOAD_CONFLICT' });
  });

  it('deletes a collection although the database first picks the delete as a deadlock victim (a load held the other lock)', async () => {
    const name = uniqueName();
    await upload(testApp, user, name, 'id\n1\n').expect(201);
    let deadlocks = 0;
    class OnceDeadlockedStore extends InternalDataStore {
      override async findForUpdate(
        ...args: Parameters<InternalDataStore['findForUpdate']>
      ): Promise<CollectionRecord | undefined> {
        if (deadlocks === 0) {
          deadlocks += 1;
          throw mysqlError(
            1213,
            'ER_LOCK_DEADLOCK',
            'Deadlock found when trying to get lock; try restarting transaction',
          );
        }
        return super.findForUpdate(...args);
      }
    }
    const service = new InternalDataService(
      new OnceDeadlockedStore(testApp.services.db, new UserStore(testApp.services.db)),
      testApp.services.collectionLookups,
      testApp.services.logger,
    );
    await service.delete(user.id, name);
    expect(deadlocks).toBe(1);
    await getRows(testApp, user, name).expect(404);
  });

  it('answers 404 COLLECTION_NOT_FOUND to reads whose table a delete dropped after the collection was found', async () => {
    const name = uniqueName();
    await upload(testApp, user, name, 'id\n1\n').expect(201);
    const dropped = () => mysqlError(1146, 'ER_NO_SUCH_TABLE', "Table 'scoring.idc_1' doesn't exist");
    class DroppedUnderneathStore extends InternalDataStore {
      override async indexes(): Promise<IndexRecord[]> {
        throw dropped();
      }

      override async page(): Promise<Array<Record<string, unknown>>> {
        throw dropped();
      }
    }
    const service = new InternalDataService(
      new DroppedUnderneathStore(testApp.services.db, new UserStore(testApp.services.db)),
      testApp.services.collectionLookups,
      testApp.services.logger,
    );
    await expect(service.indexes(user.id, name)).rejects.toMatchObject({ status: 404, code: 'COLLECTION_NOT_FOUND' });
    await expect(service.rows(user.id, name, {})).rejects.toMatchObject({ status: 404, code: 'COLLECTION_NOT_FOUND' });
  });

  it('lets two loads racing on the same new collection both succeed: one creates it, the other appends', async () => {
    const name = uniqueName();
    const [first, second] = await Promise.all([
      upload(testApp, user, name, 'id\n1\n2\n'),
      upload(testApp, user, name, 'id\n3\n'),
    ]);
    expect([first.status, second.status].sort()).toEqual([200, 201]);
    expect((await allRows(testApp, user, name)).map((row) => row.id).sort()).toEqual([1, 2, 3]);
  });
});
