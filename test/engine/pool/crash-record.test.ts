import { describe, expect, it } from '@jest/globals';
import { CrashRecord } from '../../../src/engine/pool/crash-record.js';

describe('CrashRecord', () => {
  it('quarantines a tenant at its second host death within the window, for the window', () => {
    let now = 0;
    const record = new CrashRecord(2, 60_000, () => now);
    expect(record.crashed(7)).toBe(false);
    expect(record.isQuarantined(7)).toBe(false);
    now = 30_000;
    expect(record.crashed(7)).toBe(true);
    expect(record.isQuarantined(7)).toBe(true);
    expect(record.isQuarantined(8)).toBe(false);
    expect(record.quarantinedCount()).toBe(1);
    // a further death while quarantined extends it, and is not a new quarantine
    now = 50_000;
    expect(record.crashed(7)).toBe(false);
    now = 109_000;
    expect(record.isQuarantined(7)).toBe(true);
    now = 111_000;
    expect(record.isQuarantined(7)).toBe(false);
    expect(record.quarantinedCount()).toBe(0);
  });

  it('forgets deaths older than the window', () => {
    let now = 0;
    const record = new CrashRecord(2, 60_000, () => now);
    record.crashed(7);
    now = 61_000;
    expect(record.crashed(7)).toBe(false);
    expect(record.isQuarantined(7)).toBe(false);
  });

  it('never quarantines with a threshold of 0', () => {
    const record = new CrashRecord(0, 60_000);
    for (let k = 0; k < 5; k++) expect(record.crashed(7)).toBe(false);
    expect(record.isQuarantined(7)).toBe(false);
  });
});
