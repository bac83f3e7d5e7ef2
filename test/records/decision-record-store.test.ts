import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { createDatabase } from '../../src/db/database.js';
import { MariaDbBulkInserter } from '../../src/db/mariadb-bulk-insert.js';
import type { DecisionRecord } from '../../src/records/decision-record.js';
import type { RecordPosition } from '../../src/records/decision-record-store-type.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { timeOrderedId } from '../../src/ids/time-ordered-id.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { aRecord } from './record-fixture.js';

applyTestEnvironment();
let db: Knex;
let store: MySqlDecisionRecordStore;

beforeAll(() => {
  db = createDatabase(process.env.DATABASE_URL as string);
  store = new MySqlDecisionRecordStore(db);
});
afterAll(() => db.destroy());

/** Scenario ids far above the ones the app issues, one range per test, so tests never see each other's records. */
let nextScenario = 3_000_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
const newScenarioId = () => (nextScenario += 1);

// An hour ago, to the second: recent enough that no retention sweep (they run in other test files too) deletes these records.
const T0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
const at = (seconds: number) => new Date(T0 + seconds * 1000);

const record = (scenarioId: number, overrides: Partial<DecisionRecord> = {}) =>
  aRecord(scenarioId, {
    ownerId: 7,
    requesterId: 7,
    versionId: 11,
    result: { decision: 'APPROVE', score: 612, manual: false },
    ...overrides,
  });

const bulk = () => new MariaDbBulkInserter(process.env.DATABASE_URL as string, 2);
describe.each([
  ["with MariaDB's bulk protocol", bulk],
  ['with multi-row INSERTs', () => undefined],
])('MySqlDecisionRecordStore writing %s', (_way, inserter) => {
  let writer: MySqlDecisionRecordStore;
  let bulkInserter: MariaDbBulkInserter | undefined;
  beforeAll(() => {
    bulkInserter = inserter();
    writer = new MySqlDecisionRecordStore(db, { bulk: bulkInserter });
  });
  afterAll(() => bulkInserter?.close());

  it('reads back what it stored, JSON and dates parsed', async () => {
    const scenarioId = newScenarioId();
    const stored = record(scenarioId, {
      mode: 'BATCH',
      batchId: randomUUID(),
      inputs: { age: 40, ssn: 'pii:abc' },
      maskedInputs: ['ssn'],
      trace: [{ nodeId: 'start', name: 'start', type: 'START', read: {}, wrote: { age: 40 }, durationMicros: 3 }],
      captures: [
        {
          seq: 0,
          kind: 'DATA_LOOKUP',
          nodeId: 'customer',
          callPath: [],
          attempt: 1,
          request: { collection: 'customers', keyColumn: 'id', key: 4, mode: 'ONE' },
          rows: { id: 4, tier: 'B' },
        },
        {
          seq: 1,
          kind: 'HTTP_CALL',
          nodeId: 'bureau',
          callPath: ['sub'],
          attempt: 1,
          request: { method: 'GET', url: 'https://bureau.example/x' },
          response: { status: 200, body: { ok: true } },
        },
      ],
    });
    await writer.insertMany([stored]);
    expect(await store.get(scenarioId, stored.id)).toEqual(stored);
  });

  it('keeps times to the millisecond, across seconds and with leading zeros in the milliseconds', async () => {
    const scenarioId = newScenarioId();
    const times = [0, 5, 50, 999, 1000, 1001, 61_099].map((ms) => new Date(T0 + ms));
    const stored = times.map((beganAt) => record(scenarioId, { beganAt, endedAt: new Date(beganAt.getTime() + 7) }));
    await writer.insertMany(stored);
    for (const one of stored) {
      const read = await store.get(scenarioId, one.id);
      expect([read?.beganAt.toISOString(), read?.endedAt.toISOString()]).toEqual([
        one.beganAt.toISOString(),
        one.endedAt.toISOString(),
      ]);
    }
  });

  it('keeps every character: tabs, line breaks, backslashes, \\N, NUL, quotes, emoji', async () => {
    const scenarioId = newScenarioId();
    const text = 'a\tb\nc\r\\d \\N \u0000 \'q\' "dq" é 😀 \\';
    const stored = record(scenarioId, {
      scenarioName: 'tab name',
      inputs: { text, [text]: text },
      result: { text },
      error: null,
      requestId: 'req:1.2_3-4',
    });
    await writer.insertMany([stored]);
    expect(await store.get(scenarioId, stored.id)).toEqual(stored);
  });

  it('stores the records of one scenario version on one page, with the columns its filters read', async () => {
    const scenarioId = newScenarioId();
    const stored = [
      record(scenarioId, { beganAt: at(3), requestId: 'p1' }),
      record(scenarioId, {
        beganAt: at(1),
        requestId: 'p2',
        state: 'FAILED',
        result: null,
        error: { code: 'SCRIPT_ERROR', message: 'tab\there' },
      }),
      record(scenarioId, { beganAt: at(2), requestId: 'p3' }),
      record(scenarioId, { beganAt: at(4), requestId: 'p4', version: '2', versionId: 12 }),
    ];
    await writer.insertMany(stored);
    const rows = await db('decision_record_pages')
      .where({ scenario_id: scenarioId })
      .orderBy('seq')
      .select('version', 'records', 'failed', 'first_began_at', 'last_began_at', 'ids', 'request_ids');
    expect(
      rows.map((row) => [
        row.version,
        row.records,
        row.failed,
        new Date(row.first_began_at).getTime(),
        new Date(row.last_began_at).getTime(),
        String(row.ids),
        String(row.request_ids),
      ]),
    ).toEqual([
      [
        '1',
        3,
        1,
        at(1).getTime(),
        at(3).getTime(),
        `\n${stored[0].id}\n${stored[1].id}\n${stored[2].id}\n`,
        '\np1\np2\np3\n',
      ],
      ['2', 1, 0, at(4).getTime(), at(4).getTime(), `\n${stored[3].id}\n`, '\np4\n'],
    ]);
    for (const one of stored) expect(await store.get(scenarioId, one.id)).toEqual(one);
  });

  it('inserts records larger than one statement or packet may hold', async () => {
    const scenarioId = newScenarioId();
    const big = 'x'.repeat(900_000);
    const records = [1, 2, 3, 4].map((second) => record(scenarioId, { beganAt: at(second), inputs: { text: big } }));
    await writer.insertMany(records);
    const page = await store.list(scenarioId, {}, undefined, 10);
    expect(page.records).toHaveLength(4);
    expect((page.records[0].inputs.text as string).length).toBe(900_000);
  });
});

describe('MySqlDecisionRecordStore with a bulk inserter', () => {
  it('writes with the bulk protocol when the server is MariaDB', async () => {
    const inserter = bulk();
    const sent = jest.spyOn(inserter, 'insert');
    try {
      const scenarioId = newScenarioId();
      const stored = record(scenarioId);
      await new MySqlDecisionRecordStore(db, { bulk: inserter }).insertMany([stored]);
      expect(await store.get(scenarioId, stored.id)).toEqual(stored);
      expect(await sent.mock.results[0].value).toEqual({ affectedRows: 1, warnings: 0 });
    } finally {
      await inserter.close();
    }
  });

  it('writes another way when DATABASE_URL has options only the main driver reads (the bulk inserter declines)', async () => {
    const url = new URL(process.env.DATABASE_URL as string);
    url.searchParams.set('connectTimeout', '5000');
    const inserter = new MariaDbBulkInserter(url.toString(), 2);
    try {
      const scenarioId = newScenarioId();
      const stored = record(scenarioId);
      expect(await inserter.insert('SELECT 1', [[1]])).toBeUndefined();
      await new MySqlDecisionRecordStore(db, { bulk: inserter }).insertMany([stored]);
      expect(await store.get(scenarioId, stored.id)).toEqual(stored);
    } finally {
      await inserter.close();
    }
  });
});

describe('MySqlDecisionRecordStore', () => {
  it("answers undefined for another scenario's record", async () => {
    const scenarioId = newScenarioId();
    const stored = record(scenarioId);
    await store.insertMany([stored]);
    expect(await store.get(newScenarioId(), stored.id)).toBeUndefined();
    expect(await store.get(scenarioId, randomUUID())).toBeUndefined();
  });

  it('lists newest first (in the order stored), in pages that follow each other without gaps or repeats', async () => {
    const scenarioId = newScenarioId();
    // 7 records: two pairs begin in the same millisecond.
    const records = [0, 1, 1, 2, 3, 3, 4].map((second, index) =>
      record(scenarioId, { beganAt: at(second), requestId: `r${index}` }),
    );
    await store.insertMany(records);
    await store.insertMany([record(newScenarioId())]);
    const seen: string[] = [];
    let after: RecordPosition | undefined;
    for (let pages = 0; pages < 10; pages += 1) {
      const page = await store.list(scenarioId, {}, after, 3);
      seen.push(...page.records.map((r) => r.requestId));
      if (!page.next) break;
      after = page.next;
    }
    expect(seen).toEqual(['r6', 'r5', 'r4', 'r3', 'r2', 'r1', 'r0']);
  });

  it('holds no more than pageMaxChars bytes of record JSON in a page, at least one record, and pages on from where a short page stopped', async () => {
    const scenarioId = newScenarioId();
    const small = new MySqlDecisionRecordStore(db, { pageMaxChars: 25_000 });
    // Results of about 10,000 bytes each (r0 of 30,000: larger than a page on its own), newest r5.
    const records = [30_000, 10_000, 10_000, 10_000, 10_000, 10_000].map((size, index) =>
      record(scenarioId, { beganAt: at(index), requestId: `r${index}`, result: { blob: 'x'.repeat(size) } }),
    );
    await store.insertMany(records);
    const pages: string[][] = [];
    let after: RecordPosition | undefined;
    for (let k = 0; k < 10; k += 1) {
      const page = await small.list(scenarioId, {}, after, 100);
      pages.push(page.records.map((r) => r.requestId));
      if (!page.next) break;
      after = page.next;
    }
    expect(pages).toEqual([['r5', 'r4'], ['r3', 'r2'], ['r1'], ['r0']]);
    // The default holds them all in one page, and `limit` still applies.
    expect((await store.list(scenarioId, {}, undefined, 100)).records).toHaveLength(6);
    expect((await small.list(scenarioId, {}, undefined, 1)).records.map((r) => r.requestId)).toEqual(['r5']);
  });

  it('reads a filter few records pass in bounded steps: short or empty pages, each with a cursor, until the match', async () => {
    const scenarioId = newScenarioId();
    const small = new MySqlDecisionRecordStore(db, { pageMaxChars: 25_000 });
    // Five stored pages of one record of 10,000 bytes each.
    for (let index = 0; index < 5; index += 1)
      await store.insertMany([
        record(scenarioId, { beganAt: at(index), requestId: `h${index}`, result: { blob: 'x'.repeat(10_000) } }),
      ]);
    const pages: string[][] = [];
    let after: RecordPosition | undefined;
    for (let k = 0; k < 10; k += 1) {
      const page = await small.list(scenarioId, { outputs: { blob: 'nope' } }, after, 100);
      pages.push(page.records.map((r) => r.requestId));
      if (!page.next) break;
      after = page.next;
    }
    // 25,000 bytes read per call: three pages, then the other two.
    expect(pages).toEqual([[], []]);
    expect(
      (
        await small.list(scenarioId, { outputs: { blob: 'x'.repeat(10_000) }, requestId: 'h0' }, undefined, 100)
      ).records.map((r) => r.requestId),
    ).toEqual(['h0']);
  });

  it('never loads much more than 4 MiB of pages in one query, small pages followed by large ones included', async () => {
    const scenarioId = newScenarioId();
    // Five older pages of one 2 MiB record each, then 600 newer pages of one small record each.
    for (let k = 0; k < 5; k += 1)
      await store.insertMany([
        record(scenarioId, { requestId: `large${k}`, result: { blob: 'x'.repeat(2 * 1024 * 1024) } }),
      ]);
    const small = Array.from({ length: 600 }, (_, k) => record(scenarioId, { requestId: `small${k}` }));
    for (let k = 0; k < 600; k += 20) await Promise.all(small.slice(k, k + 20).map((one) => store.insertMany([one])));
    const loaded: number[] = [];
    const measure = (rows: unknown) => {
      if (!Array.isArray(rows)) return;
      const bytes = rows.reduce(
        (sum: number, row: { body?: Buffer }) => sum + (Buffer.isBuffer(row.body) ? row.body.length : 0),
        0,
      );
      if (bytes > 0) loaded.push(bytes);
    };
    db.on('query-response', measure);
    try {
      let seen = 0;
      let after: RecordPosition | undefined;
      for (let k = 0; k < 20; k += 1) {
        const page = await store.list(scenarioId, {}, after, 500);
        seen += page.records.length;
        if (!page.next) break;
        after = page.next;
      }
      expect(seen).toBe(605);
    } finally {
      db.off('query-response', measure);
    }
    expect(loaded.length).toBeGreaterThan(0);
    expect(Math.max(...loaded)).toBeLessThanOrEqual(4 * 1024 * 1024 + 2.1 * 1024 * 1024);
  });

  it("counts what passes a filter, from the pages' columns where they tell and record by record where not, up to a maximum", async () => {
    const scenarioId = newScenarioId();
    await store.insertMany(
      [0, 1, 2].map((index) => record(scenarioId, { beganAt: at(index), requestId: `n${index}` })),
    );
    await store.insertMany([
      record(scenarioId, {
        beganAt: at(3),
        state: 'FAILED',
        result: null,
        error: { code: 'SCRIPT_ERROR', message: 'x' },
      }),
      record(scenarioId, { beganAt: at(4) }),
    ]);
    expect(await store.count(scenarioId, {}, 100)).toBe(5);
    expect(await store.count(scenarioId, {}, 4)).toBe(4);
    expect(await store.count(scenarioId, { state: 'FAILED' }, 100)).toBe(1);
    expect(await store.count(scenarioId, { state: 'SUCCEEDED' }, 100)).toBe(4);
    expect(await store.count(scenarioId, { from: at(1), to: at(4) }, 100)).toBe(3);
    expect(await store.count(scenarioId, { requestId: 'n1' }, 100)).toBe(1);
    expect(await store.count(scenarioId, { outputs: { decision: 'APPROVE' } }, 100)).toBe(4);
  });

  it('finds a record by id on a page among others, whatever its id looks like', async () => {
    const scenarioId = newScenarioId();
    const stored = [
      record(scenarioId),
      record(scenarioId, { id: 'not-a-uuid' }),
      record(scenarioId, { id: timeOrderedId() }),
    ];
    await store.insertMany(stored);
    for (const one of stored) expect((await store.get(scenarioId, one.id))?.requestId).toBe(one.requestId);
    expect(await store.get(scenarioId, 'not-a')).toBeUndefined();
  });

  it("counts a record's captures towards a page's size (a replay reads them with the page)", async () => {
    const scenarioId = newScenarioId();
    const small = new MySqlDecisionRecordStore(db, { pageMaxChars: 25_000 });
    const captured = (index: number) =>
      record(scenarioId, {
        beganAt: at(index),
        requestId: `c${index}`,
        captures: [
          {
            seq: 0,
            kind: 'HTTP_CALL',
            nodeId: 'h',
            callPath: [],
            attempt: 1,
            request: { method: 'GET', url: 'https://x.example' },
            response: { status: 200, body: 'y'.repeat(10_000) },
          },
        ],
      });
    await store.insertMany([0, 1, 2].map(captured));
    expect((await small.list(scenarioId, {}, undefined, 100)).records.map((r) => r.requestId)).toEqual(['c2', 'c1']);
  });

  it('lists summaries: no trace or captures, but whether there are any', async () => {
    const scenarioId = newScenarioId();
    await store.insertMany([
      record(scenarioId, {
        trace: [],
        captures: [
          {
            seq: 0,
            kind: 'HTTP_CALL',
            nodeId: 'h',
            callPath: [],
            attempt: 1,
            request: { method: 'GET', url: 'https://x.example' },
            failure: { code: 'HTTP_CALL_FAILED', message: 'refused' },
          },
        ],
      }),
    ]);
    const [summary] = (await store.list(scenarioId, {}, undefined, 5)).records;
    expect(summary).toMatchObject({ hasTrace: true, captureCount: 1 });
    expect(summary).not.toHaveProperty('trace');
    expect(summary).not.toHaveProperty('captures');
  });

  describe('filters', () => {
    const scenarioId = newScenarioId();
    const records = [
      record(scenarioId, {
        beganAt: at(10),
        version: '1',
        requestId: 'a',
        result: { decision: 'APPROVE', score: 700, manual: false },
      }),
      record(scenarioId, {
        beganAt: at(20),
        version: '2',
        requestId: 'b',
        result: { decision: 'DECLINE', score: 310.5, manual: true },
      }),
      record(scenarioId, {
        beganAt: at(30),
        version: '2',
        requestId: 'c',
        state: 'FAILED',
        result: null,
        error: { code: 'SCRIPT_ERROR', message: 'boom' },
      }),
      record(scenarioId, {
        beganAt: at(40),
        version: '2',
        requestId: 'd',
        result: { decision: 'APPROVE', score: 650, manual: false, note: null },
      }),
    ];
    beforeAll(() => store.insertMany(records));
    const ids = async (filter: Parameters<MySqlDecisionRecordStore['list']>[1]) =>
      (await store.list(scenarioId, filter, undefined, 50)).records.map((r) => r.requestId);

    it('by version', async () => expect(await ids({ version: '2' })).toEqual(['d', 'c', 'b']));
    it('by state', async () => expect(await ids({ state: 'FAILED' })).toEqual(['c']));
    it('by request id', async () => expect(await ids({ requestId: 'b' })).toEqual(['b']));
    it('by time: from inclusive, to exclusive', async () =>
      expect(await ids({ from: at(20), to: at(40) })).toEqual(['c', 'b']));
    it('by an output equal to a string', async () =>
      expect(await ids({ outputs: { decision: 'APPROVE' } })).toEqual(['d', 'a']));
    it('by an output equal to a number or a boolean, as JSON writes them', async () => {
      expect(await ids({ outputs: { score: '310.5' } })).toEqual(['b']);
      expect(await ids({ outputs: { manual: 'false' } })).toEqual(['d', 'a']);
    });
    it('by an output equal to null: a null output, or one the result does not have (as replay reports count it); never a failed run', async () => {
      expect(await ids({ outputs: { note: 'null' } })).toEqual(['d', 'b', 'a']);
      expect(await ids({ outputs: { note: 'null', decision: 'DECLINE' } })).toEqual(['b']);
      expect(await ids({ outputs: { score: 'null' } })).toEqual([]);
    });
    it('by several at once (all must hold)', async () => {
      expect(await ids({ version: '2', outputs: { decision: 'APPROVE', manual: 'false' } })).toEqual(['d']);
      expect(await ids({ version: '1', state: 'FAILED' })).toEqual([]);
    });
    it('compares output strings case-sensitively', async () =>
      expect(await ids({ outputs: { decision: 'approve' } })).toEqual([]));
  });

  it('deletes pages whose records all began before a cutoff, at most `limit` records per call (at least a page), and lists scenarios with records', async () => {
    const scenarioId = newScenarioId();
    const other = newScenarioId();
    // Pages of one record each at 1–5 s, then a page of two straddling the cutoff (3.5 s and 6 s).
    for (const second of [1, 2, 3, 4, 5]) await store.insertMany([record(scenarioId, { beganAt: at(second) })]);
    await store.insertMany([record(scenarioId, { beganAt: at(3.5) }), record(scenarioId, { beganAt: at(6) })]);
    await store.insertMany([record(other, { beganAt: at(1) })]);
    expect(await store.scenariosWithRecords()).toEqual(expect.arrayContaining([scenarioId, other]));
    expect(await store.deleteBegunBefore(scenarioId, at(4), 2)).toBe(2);
    expect(await store.deleteBegunBefore(scenarioId, at(4), 2)).toBe(1);
    expect(await store.deleteBegunBefore(scenarioId, at(4), 2)).toBe(0);
    const left = (await store.list(scenarioId, {}, undefined, 10)).records.map((r) => r.beganAt.getTime());
    expect(left).toEqual([at(6).getTime(), at(3.5).getTime(), at(5).getTime(), at(4).getTime()]);
    expect((await store.list(other, {}, undefined, 10)).records).toHaveLength(1);
  });
});
