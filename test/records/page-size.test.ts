import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { loadConfig } from '../../src/config/config.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { aRecord } from './record-fixture.js';
import { listRecords, scenarioIdOf } from './support.js';

/**
 * A page of records is bounded in characters of JSON as well as in records (RECORDS_PAGE_MAX_CHARS): a run's result may
 * be 8 Mi characters of JSON, so 500 of them in one page would have loaded gigabytes into the API process.
 */

let t: TestApp;
let alice: TestUser;
let scenarioId: string;

beforeAll(async () => {
  t = await createTestApp({ configOverrides: { records: { ...loadConfig().records, pageMaxChars: 5_000 } } });
  alice = await t.newUser();
  await deployScenario(t.services.db, alice.id, 'large', doublingScenario());
  scenarioId = await scenarioIdOf(t, alice.id, 'large');
  const T0 = Date.now() - 3_600_000;
  for (let k = 0; k < 5; k += 1) {
    t.services.records.recorder.record(
      aRecord(Number(scenarioId), {
        ownerId: alice.id,
        requesterId: alice.id,
        requestId: `r${k}`,
        beganAt: new Date(T0 + k * 1000),
        result: { report: 'x'.repeat(k === 0 ? 12_000 : 2_000) },
      }),
    );
  }
  await t.services.records.recorder.flush();
});
afterAll(() => t.close());

describe('listDecisionRecords with records larger than a page allows', () => {
  it('cuts a page short by size with a nextCursor, serves a record larger than a page alone, and loses none', async () => {
    const pages: string[][] = [];
    let cursor: string | undefined;
    for (let k = 0; k < 10; k += 1) {
      const response = await listRecords(t, alice, scenarioId, { limit: 500, ...(cursor ? { cursor } : {}) });
      expect(response.status).toBe(200);
      pages.push(response.body.records.map((r: { requestId: string }) => r.requestId));
      cursor = response.body.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(pages).toEqual([['r4', 'r3'], ['r2', 'r1'], ['r0']]);
  });
});
