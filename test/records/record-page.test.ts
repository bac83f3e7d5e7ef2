import { describe, expect, it } from '@jest/globals';
import {
  PAGE_TARGET_BYTES,
  pagesOf,
  readRecord,
  recordsOnPage,
  type SealedPage,
  type StoredPage,
} from '../../src/records/record-page.js';
import { aRecord } from './record-fixture.js';

/** The page format: records of one scenario version on a page, each its own JSON text, read back one by one. */

const stored = (page: SealedPage, seq = 1): StoredPage => ({
  seq,
  key: page.key,
  body: Buffer.from(page.body),
  ends: Buffer.from(page.ends),
});

describe('record pages', () => {
  it('puts consecutive records of one scenario version on one page and reads each back as it was', () => {
    const records = [
      aRecord(5, { requestId: 'a' }),
      aRecord(5, { requestId: 'b', state: 'FAILED', result: null, error: { code: 'X', message: 'é 😀' } }),
      aRecord(5, { requestId: 'c', version: '2', versionId: 9 }),
    ];
    const pages = pagesOf(records);
    expect(pages.map((page) => [page.key.version, page.count, page.failed, page.requestIds])).toEqual([
      ['1', 2, 1, '\na\nb\n'],
      ['2', 1, 0, '\nc\n'],
    ]);
    const first = stored(pages[0]);
    expect(recordsOnPage(first)).toBe(2);
    expect([readRecord(first, 0), readRecord(first, 1)]).toEqual(records.slice(0, 2));
    expect(readRecord(stored(pages[1]), 0)).toEqual(records[2]);
  });

  it(`seals a page at about ${PAGE_TARGET_BYTES} bytes, and gives a larger record a page of its own`, () => {
    const text = 'x'.repeat(100_000);
    const records = [
      ...Array.from({ length: 12 }, (_, k) => aRecord(5, { requestId: `r${k}`, inputs: { text } })),
      aRecord(5, { requestId: 'big', inputs: { text: 'y'.repeat(2 * PAGE_TARGET_BYTES) } }),
    ];
    const pages = pagesOf(records);
    expect(pages.map((page) => page.count)).toEqual([8, 4, 1]);
    for (const page of pages.slice(0, 2)) expect(page.body.length).toBeLessThanOrEqual(PAGE_TARGET_BYTES);
    expect(readRecord(stored(pages[2]), 0).inputs.text).toHaveLength(2 * PAGE_TARGET_BYTES);
  });

  it('splits a page into pages of one record each (storing record by record), with their own columns', () => {
    const records = [
      aRecord(5, { requestId: 'a', beganAt: new Date(1000) }),
      aRecord(5, {
        requestId: 'b',
        beganAt: new Date(3000),
        state: 'FAILED',
        result: null,
        error: { code: 'X', message: 'm' },
      }),
    ];
    const [page] = pagesOf(records);
    const singles = page.split();
    expect(
      singles.map((one) => [one.count, one.failed, one.ids, one.firstBeganAt.getTime(), one.lastBeganAt.getTime()]),
    ).toEqual([
      [1, 0, `\n${records[0].id}\n`, 1000, 1000],
      [1, 1, `\n${records[1].id}\n`, 3000, 3000],
    ]);
    expect(singles.map((one) => readRecord(stored(one), 0))).toEqual(records);
  });
});
