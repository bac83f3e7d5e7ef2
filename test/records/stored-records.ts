import type { Knex } from 'knex';
import type { DecisionRecordSummary } from '../../src/records/decision-record.js';
import type { RecordPosition } from '../../src/records/decision-record-store-type.js';
import { MySqlDecisionRecordStore } from '../../src/records/decision-record-store.js';

/** Decision records stored for a scenario (the pages' record counts added up). */
export async function storedRecordCount(db: Knex, scenarioId: number | string): Promise<number> {
  const row = (await db('decision_record_pages')
    .where('scenario_id', Number(scenarioId))
    .sum({ n: 'records' })
    .first()) as { n: number | string | null };
  return Number(row.n ?? 0);
}

/** Every record of a scenario, newest first, as the store lists them. */
export async function allStoredRecords(db: Knex, scenarioId: number | string): Promise<DecisionRecordSummary[]> {
  const store = new MySqlDecisionRecordStore(db);
  const records: DecisionRecordSummary[] = [];
  let after: RecordPosition | undefined;
  for (;;) {
    const page = await store.list(Number(scenarioId), {}, after, 500);
    records.push(...page.records);
    if (!page.next) return records;
    after = page.next;
  }
}
