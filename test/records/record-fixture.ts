import { randomUUID } from 'node:crypto';
import type { DecisionRecord } from '../../src/records/decision-record.js';

/** A successful sync record of `scenarioId`, begun a minute ago (a new id and request id each time), with what `overrides` changes. */
export function aRecord(scenarioId: number, overrides: Partial<DecisionRecord> = {}): DecisionRecord {
  // Recent by default: no retention sweep of another test file deletes it.
  const beganAt = overrides.beganAt ?? new Date(Date.now() - 60_000);
  return {
    id: randomUUID(),
    ownerId: 1,
    scenarioId,
    scenarioName: 'credit',
    version: '1',
    versionId: 1,
    mode: 'SYNC',
    requesterId: 1,
    requestId: randomUUID(),
    batchId: null,
    state: 'SUCCEEDED',
    inputs: { age: 40 },
    maskedInputs: [],
    result: { decision: 'APPROVE' },
    error: null,
    beganAt,
    endedAt: new Date(beganAt.getTime() + 2),
    durationMicros: 1834,
    trace: null,
    captures: [],
    ...overrides,
  };
}
