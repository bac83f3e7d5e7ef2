import type { Knex } from 'knex';
import type { StoreTransaction } from '../../../src/db/store-transaction.js';
import {
  createInternalDataHandlers,
  type InternalDataHandlerDeps,
} from '../../../src/internal-data/internal-data-routes.js';
import { InternalDataService } from '../../../src/internal-data/internal-data-service.js';
import { InternalDataStore, type LocalLoadResult } from '../../../src/internal-data/internal-data-store.js';
import type { ColumnSpec } from '../../../src/internal-data/column-types.js';
import type { CellValue } from '../../../src/internal-data/row-encoder.js';
import type { NumberedRows } from '../../../src/internal-data/internal-data-store-type.js';
import { createTestApp, type TestApp } from '../../support/test-app.js';
import { UserStore } from '../../../src/auth/user-store.js';

/** The two ways a load reaches the table: the fast path, and the fallback when the server has `local_infile` OFF. */
export const LOAD_PATHS = ['LOAD DATA LOCAL INFILE', 'INSERT fallback (local_infile OFF)'] as const;
export type LoadPath = (typeof LOAD_PATHS)[number];

/** The real store, counting which path ran, with switches to simulate what the test server cannot do. */
export class RecordingStore extends InternalDataStore {
  localLoads = 0;
  insertStatements = 0;
  /** The next LOAD DATA answers with one row fewer than it wrote (as if the server had skipped one). */
  loseOneRow = false;
  /** LOAD DATA answers ER_NOT_ALLOWED_COMMAND (1148) without reading anything, as a server refusing LOCAL does. */
  refuseLocal = false;
  /** Runs once a collection or staging table exists: after the first pass, before the rows are sent. */
  afterCreateTable?: () => Promise<void>;

  constructor(
    db: Knex,
    private readonly localInfile: boolean,
  ) {
    super(db, new UserStore(db));
  }

  override async createTable(table: string, columns: ColumnSpec[]): Promise<void> {
    await super.createTable(table, columns);
    await this.afterCreateTable?.();
  }

  override async localInfileEnabled(): Promise<boolean> {
    return this.localInfile && super.localInfileEnabled();
  }

  override async loadLocal(rows: NumberedRows<AsyncIterable<CellValue[][]>>): Promise<LocalLoadResult> {
    this.localLoads += 1;
    if (this.refuseLocal) {
      throw Object.assign(new Error('The used command is not allowed with this MariaDB version'), {
        errno: 1148,
        code: 'ER_NOT_ALLOWED_COMMAND',
      });
    }
    const result = await super.loadLocal(rows);
    if (this.loseOneRow) {
      this.loseOneRow = false;
      return { ...result, affectedRows: result.affectedRows - 1 };
    }
    return result;
  }

  override async insertRows(
    trx: StoreTransaction | undefined,
    rows: NumberedRows<readonly CellValue[][]>,
  ): Promise<void> {
    this.insertStatements += 1;
    await super.insertRows(trx, rows);
  }

  reset(): void {
    this.localLoads = 0;
    this.insertStatements = 0;
  }
}

/** The real test app whose load endpoint runs on a RecordingStore taking `path`. */
export async function createLoadTestApp(path: LoadPath): Promise<{ testApp: TestApp; store: RecordingStore }> {
  const slot: { service?: InternalDataService } = {};
  // The handlers are built before the services exist: they reach the service through this delegate.
  const delegate = new Proxy({} as InternalDataService, {
    get: (_target, key) => {
      const service = slot.service as unknown as Record<string | symbol, unknown>;
      const value = service[key];
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(service) : value;
    },
  });
  const testApp = await createTestApp({
    handlers: createInternalDataHandlers({ internalData: delegate } as unknown as InternalDataHandlerDeps),
  });
  const store = new RecordingStore(testApp.services.db, path === 'LOAD DATA LOCAL INFILE');
  slot.service = new InternalDataService(store, testApp.services.collectionLookups, testApp.services.logger);
  return { testApp, store };
}
