import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Knex } from 'knex';
import { createDatabase } from '../../src/db/database.js';
import type { DecisionRecord } from '../../src/records/decision-record.js';
import type { RecordFilter, RecordPosition } from '../../src/records/decision-record-store-type.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';
import { applyTestEnvironment } from '../support/test-environment.js';

/**
 * A page of decision records deep in a scenario's list is read by an index range from the cursor's
 * stored page on, not by walking back from the newest page (which made every page cost as much as
 * all before it: a 100,000-record replay spent minutes reading). Checked on the plans of the SQL
 * `list` sends, with 3,000 stored pages (the versions alternate, so each record has a page of its own).
 */

let db: Knex;
let store: MySqlDecisionRecordStore;
const scenarioId = 2_000_000_000 + Math.floor(Math.random() * 100_000_000);

beforeAll(async () => {
  applyTestEnvironment();
  db = createDatabase(process.env.DATABASE_URL as string);
  store = new MySqlDecisionRecordStore(db);
  const base = Date.now() - 10_000;
  const records: DecisionRecord[] = Array.from({ length: 3000 }, (_, k) => {
    const id = randomUUID();
    // Runs of 50 records share a millisecond.
    const at = new Date(base + Math.floor(k / 50));
    return {
      id,
      ownerId: 1,
      scenarioId,
      scenarioName: 'pages',
      version: String(1 + (k % 2)),
      versionId: 1,
      mode: 'BATCH',
      requesterId: 1,
      requestId: id,
      batchId: null,
      state: k % 3 === 0 ? 'FAILED' : 'SUCCEEDED',
      inputs: { k },
      maskedInputs: [],
      result: { k },
      error: null,
      beganAt: at,
      endedAt: at,
      durationMicros: 1,
      trace: null,
      captures: [],
    };
  });
  await store.insertMany(records);
});
afterAll(async () => {
  await db('decision_record_pages').where({ scenario_id: scenarioId }).delete();
  await db.destroy();
});

/** The plans of the queries `list` sends for the page after `pages` pages of 100. */
async function planOfDeepPage(filter: RecordFilter, pages: number): Promise<Array<{ type: string; key: string }>> {
  let after: RecordPosition | undefined;
  for (let k = 0; k < pages; k += 1) after = (await store.list(scenarioId, filter, after, 100)).next ?? undefined;
  const sent: Array<{ sql: string; bindings: unknown[] }> = [];
  const listen = (query: { sql: string; bindings: unknown[] }) => sent.push(query);
  db.on('query', listen);
  try {
    await store.list(scenarioId, filter, after, 100);
  } finally {
    db.off('query', listen);
  }
  const plans = [];
  for (const query of sent) {
    const [rows] = (await db.raw(`EXPLAIN ${query.sql}`, query.bindings as Knex.RawBinding[])) as [
      Array<{ type: string; key: string }>,
    ];
    plans.push(rows[0]);
  }
  return plans;
}

describe("list, deep in a scenario's records", () => {
  it.each<[string, RecordFilter, string]>([
    ['no filter', {}, 'decision_record_pages_scenario'],
    ['a time range', { from: new Date(0), to: new Date(Date.now() + 60_000) }, 'decision_record_pages_scenario'],
    ['a version', { version: '2' }, 'decision_record_pages_scenario_version'],
    ['a state', { state: 'SUCCEEDED' }, 'decision_record_pages_scenario'],
  ])('reads one page by index ranges (%s)', async (_name, filter, index) => {
    const plans = await planOfDeepPage(filter, 12);
    expect(plans.length).toBeGreaterThan(0);
    // Each step: the next pages' sizes by the index, then the pages that fit by their primary key.
    plans.forEach((plan, k) => {
      expect(plan).toMatchObject({ type: 'range', key: k % 2 === 0 ? index : 'PRIMARY' });
    });
  });

  it('pages through all 3,000 without gaps or repeats', async () => {
    const seen = new Set<string>();
    let after: RecordPosition | undefined;
    for (let k = 0; k < 40; k += 1) {
      const page = await store.list(scenarioId, {}, after, 100);
      for (const record of page.records) seen.add(record.id);
      if (!page.next) break;
      after = page.next;
    }
    expect(seen.size).toBe(3000);
  });
});
