import { describe, expect, it } from '@jest/globals';
import { insertedWithoutDuplicates } from '../../src/db/insert-duplicates.js';

describe('insertedWithoutDuplicates', () => {
  it('is true only for a multi-row insert whose answer counts no duplicate', () => {
    expect(insertedWithoutDuplicates({ affectedRows: 250, info: 'Records: 250  Duplicates: 0  Warnings: 0' })).toBe(
      true,
    );
    expect(insertedWithoutDuplicates({ affectedRows: 250, info: 'Records: 250  Duplicates: 3  Warnings: 0' })).toBe(
      false,
    );
    expect(insertedWithoutDuplicates({ affectedRows: 2, info: 'Records: 2  Duplicates: 10  Warnings: 0' })).toBe(false);
  });

  it('is false when the answer says nothing of duplicates (a statement of one row, another statement)', () => {
    expect(insertedWithoutDuplicates({ affectedRows: 1, info: '' })).toBe(false);
    expect(insertedWithoutDuplicates({ affectedRows: 3, info: 'Rows matched: 3  Changed: 3  Warnings: 0' })).toBe(
      false,
    );
    expect(insertedWithoutDuplicates({ affectedRows: 3 } as never)).toBe(false);
  });
});
