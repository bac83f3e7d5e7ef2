import { describe, expect, it } from '@jest/globals';
import { timeOrderedId } from '../../src/ids/time-ordered-id.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('timeOrderedId', () => {
  it('is a UUID of version 7 and the RFC variant, carrying the time in its first 48 bits', () => {
    const now = Date.UTC(2026, 10, 23, 12, 0, 0, 123);
    const id = timeOrderedId(now);
    expect(id).toMatch(UUID_V7);
    expect(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toBe(now);
  });

  it('sorts as text in the order of the milliseconds it was made in', () => {
    const times = [0, 1, 255, 256, 1_700_000_000_000, 1_700_000_000_001, 2 ** 48 - 1];
    const ids = times.map((time) => timeOrderedId(time));
    expect([...ids].sort()).toEqual(ids);
  });

  it('differs between ids of the same millisecond', () => {
    const now = Date.now();
    const ids = new Set(Array.from({ length: 10_000 }, () => timeOrderedId(now)));
    expect(ids.size).toBe(10_000);
  });
});
