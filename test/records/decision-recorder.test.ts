import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import pino from 'pino';
import { createDatabase } from '../../src/db/database.js';
import { MariaDbBulkInserter } from '../../src/db/mariadb-bulk-insert.js';
import type { DecisionRecord } from '../../src/records/decision-record.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import {
  DecisionRecorder,
  type DecisionRecorderOptions,
  type DropReason,
} from '../../src/records/decision-recorder.js';
import type { SealedPage } from '../../src/records/record-page.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { aRecord } from './record-fixture.js';
import { storedRecordCount } from './stored-records.js';

/** The bulk writer: buffered, inserted in groups, bounded, and never losing a record without counting and logging it. */

applyTestEnvironment();
let db: Knex;
let down: Knex;
beforeAll(() => {
  db = createDatabase(process.env.DATABASE_URL as string);
  // Nothing listens on port 1: every query is refused at once, as when MySQL is down.
  down = createDatabase('mysql://root@127.0.0.1:1/scoring_test', { min: 0, max: 2 }, true);
});
afterAll(async () => {
  await db.destroy();
  await down.destroy();
});

let nextScenario = 3_500_000_000 + Math.floor(Math.random() * 1_000_000) * 10;
function records(count: number, overrides: Partial<DecisionRecord> = {}): DecisionRecord[] {
  nextScenario += 1;
  const scenarioId = nextScenario;
  return Array.from({ length: count }, (_, k) =>
    aRecord(scenarioId, { requestId: `r${k}`, inputs: { k }, result: { k }, beganAt: new Date(), ...overrides }),
  );
}

/** The real store, counting its inserts. */
class CountingStore extends MySqlDecisionRecordStore {
  inserts = 0;
  override async insertPages(pages: SealedPage[]): Promise<void> {
    this.inserts += 1;
    await super.insertPages(pages);
  }
}

function recorder(store: MySqlDecisionRecordStore, options: Partial<DecisionRecorderOptions> = {}) {
  const drops: Array<[number, DropReason]> = [];
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(line, _encoding, done) {
      logs.push(JSON.parse(String(line)));
      done();
    },
  });
  const instance = new DecisionRecorder(
    store,
    {
      batchSize: 100,
      flushIntervalMs: 20,
      maxBuffered: 10_000,
      onDropped: (count, reason) => drops.push([count, reason]),
      ...options,
    },
    pino({ level: 'info' }, sink),
  );
  return { recorder: instance, drops, logs };
}

const storedCount = (scenarioId: number) => storedRecordCount(db, scenarioId);

describe('DecisionRecorder', () => {
  it('encodes without waiting and inserts many records per statement', async () => {
    const store = new CountingStore(db);
    const { recorder: subject, drops } = recorder(store);
    const batch = records(1000);
    for (const record of batch) subject.record(record);
    expect(subject.pending).toBe(1000);
    await subject.flush();
    expect(subject.pending).toBe(0);
    expect(await storedCount(batch[0].scenarioId)).toBe(1000);
    // At least 1000 / 100 inserts; one per record would be 1000.
    expect(store.inserts).toBeLessThanOrEqual(15);
    expect(drops).toEqual([]);
  });

  it('drops and counts what does not fit its bounded buffer, and logs the count', async () => {
    const { recorder: subject, drops, logs } = recorder(new MySqlDecisionRecordStore(db), { maxBuffered: 5 });
    const batch = records(20);
    for (const record of batch) subject.record(record);
    await subject.close();
    expect(await storedCount(batch[0].scenarioId)).toBe(5);
    expect(drops).toEqual(Array.from({ length: 15 }, () => [1, 'buffer_full']));
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 50, reason: 'buffer_full', dropped: expect.any(Number) }),
    );
    expect(
      logs.filter((line) => line.reason === 'buffer_full').reduce((sum, line) => sum + (line.dropped as number), 0),
    ).toBe(15);
  });

  it('holds the records while the database is down and stores every one once it answers (issue 27, problem 8)', async () => {
    // Down for the first tries: every insert loses its connection and a ping gets no answer.
    class FlakyStore extends MySqlDecisionRecordStore {
      downFor = 6;
      override async insertPages(pages: SealedPage[]): Promise<void> {
        if (this.downFor > 0) {
          this.downFor -= 1;
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3306'), { code: 'ECONNREFUSED', fatal: true });
        }
        await super.insertPages(pages);
      }
      override async databaseAnswers(): Promise<boolean> {
        return this.downFor <= 0;
      }
    }
    const { recorder: subject, drops, logs } = recorder(new FlakyStore(db));
    const batch = records(30);
    for (const record of batch) subject.record(record);
    await subject.flush(10_000);
    expect(drops).toEqual([]);
    expect(subject.pending).toBe(0);
    expect(await storedCount(batch[0].scenarioId)).toBe(30);
    expect(logs).toContainEqual(
      expect.objectContaining({
        level: 40,
        msg: 'MySQL is unreachable: decision records are held and tried again until it answers',
      }),
    );
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 40, msg: 'decision records stored again after MySQL was unreachable' }),
    );
  });

  it('keeps holding while the database stays down, within its bounded buffer, and counts what is left at shutdown', async () => {
    const { recorder: subject, drops } = recorder(new MySqlDecisionRecordStore(down), { maxBuffered: 20 });
    for (const record of records(30)) subject.record(record);
    await subject.flush(1500);
    expect(subject.pending).toBe(20);
    expect(drops).toEqual(Array.from({ length: 10 }, () => [1, 'buffer_full']));
    // Closed while it is still down: what it holds is counted as shutdown drops, and it stops trying.
    const closing = Date.now();
    await subject.close();
    expect(Date.now() - closing).toBeLessThan(12_000);
    expect(drops.slice(10)).toEqual([[20, 'shutdown']]);
    expect(subject.pending).toBe(0);
  }, 30_000);

  it.each([
    ['multi-row INSERTs', () => undefined],
    ["MariaDB's bulk protocol", () => new MariaDbBulkInserter(process.env.DATABASE_URL as string, 2)],
  ])(
    'stores the rest of a group when the database refuses one record, and counts that one (%s)',
    async (_way, inserter) => {
      // The database refuses a value too long for its column (strict mode).
      const bulk = inserter();
      const { recorder: subject, drops, logs } = recorder(new MySqlDecisionRecordStore(db, { bulk }));
      const batch = records(10);
      batch[4] = { ...batch[4], scenarioName: 'x'.repeat(500) };
      // One group: queued while the first insert of another record is in flight.
      for (const record of batch) subject.record(record);
      await subject.flush();
      await bulk?.close();
      expect(await storedCount(batch[0].scenarioId)).toBe(9);
      expect(drops).toEqual([[1, 'store_refused']]);
      expect(logs).toContainEqual(expect.objectContaining({ reason: 'store_refused', dropped: 1 }));
    },
  );

  it.each([
    ['multi-row INSERTs', () => undefined],
    ["MariaDB's bulk protocol", () => new MariaDbBulkInserter(process.env.DATABASE_URL as string, 2)],
  ])(
    'stores the rest of a group when one record is larger than max_allowed_packet, and counts that one as refused (%s)',
    async (_way, inserter) => {
      // 16 MiB is the server's max_allowed_packet here: it closes the connection (a "fatal" error), but it is not down.
      const bulk = inserter();
      const { recorder: subject, drops } = recorder(new MySqlDecisionRecordStore(db, { bulk }));
      const batch = records(6);
      batch[2] = { ...batch[2], inputs: { text: 'x'.repeat(17 * 1024 * 1024) } };
      for (const record of batch) subject.record(record);
      await subject.flush();
      await bulk?.close();
      expect(await storedCount(batch[0].scenarioId)).toBe(5);
      expect(drops).toEqual([[1, 'store_refused']]);
    },
  );

  it("with MariaDB's bulk protocol: holds the records a database that is down does not take, without waiting on each", async () => {
    const bulk = new MariaDbBulkInserter('mysql://root@127.0.0.1:1/scoring_test', 2);
    const { recorder: subject, drops } = recorder(new MySqlDecisionRecordStore(down, { bulk }));
    for (const record of records(30)) subject.record(record);
    await subject.flush(1500);
    expect(subject.pending).toBe(30);
    expect(drops).toEqual([]);
    await subject.close();
    expect(drops).toEqual([[30, 'shutdown']]);
    await bulk.close();
  }, 30_000);

  it('counts and logs a record that cannot be encoded, and stores the others', async () => {
    const { recorder: subject, drops, logs } = recorder(new MySqlDecisionRecordStore(db));
    const batch = records(3);
    batch[1] = { ...batch[1], result: { big: 10n } };
    for (const record of batch) subject.record(record);
    await subject.flush();
    expect(await storedCount(batch[0].scenarioId)).toBe(2);
    expect(drops).toEqual([[1, 'unrecordable']]);
    expect(logs).toContainEqual(
      expect.objectContaining({ level: 50, reason: 'unrecordable', msg: 'decision records dropped' }),
    );
  });

  it('stores what it holds when closed, then drops and counts what comes after', async () => {
    const { recorder: subject, drops } = recorder(new MySqlDecisionRecordStore(db), { flushIntervalMs: 200 });
    const batch = records(50);
    for (const record of batch) subject.record(record);
    await subject.close();
    expect(await storedCount(batch[0].scenarioId)).toBe(50);
    subject.record(records(1)[0]);
    expect(drops).toEqual([[1, 'shutdown']]);
  });
});
