import type { ColumnSpec } from '../../src/internal-data/column-types.js';
import { RowEncoder } from '../../src/internal-data/row-encoder.js';

const columns: ColumnSpec[] = [
  { name: 'id', type: 'INTEGER', nullable: false, sqlType: 'BIGINT' },
  { name: 'score', type: 'DOUBLE', nullable: true, sqlType: 'DOUBLE' },
  { name: 'active', type: 'BOOLEAN', nullable: true, sqlType: 'BOOLEAN' },
  { name: 'label', type: 'STRING', nullable: true, sqlType: 'VARCHAR(255)' },
];
const encoder = new RowEncoder(columns);

describe('RowEncoder, the one encoder of both load paths', () => {
  it('encodes each value as its column holds it, empty cells as NULL', () => {
    expect(encoder.encode(['-12', '2.', 'TRUE', 'x\ty'], 2)).toEqual(['-12', '2.0', '1', 'x\ty']);
    expect(encoder.encode(['9223372036854775807', '7', 'false', ''], 3)).toEqual([
      '9223372036854775807',
      '7',
      '0',
      null,
    ]);
    expect(encoder.encode(['', '', '', ''], 4)).toEqual([null, null, null, null]);
  });

  it.each([
    ['1);DROP TABLE x;--', 0],
    ['(SELECT 1)', 0],
    ['1+1', 0],
    ['0x41', 0],
    [' 1', 0],
    ['9223372036854775808', 0],
    ['1.5', 0],
    ['1e3; DELETE', 1],
    ['NaN', 1],
    ['Infinity', 1],
    ['1e999', 1],
    ['yes', 2],
    ['1', 2],
  ])('refuses %j in column %i, naming line and column', (value, index) => {
    const record = ['1', '1.5', 'true', 'a'];
    record[index] = value;
    expect(() => encoder.encode(record, 7)).toThrow(
      expect.objectContaining({
        status: 400,
        code: 'INVALID_CSV',
        message: expect.stringContaining(`line 7: column "${columns[index].name}" is ${columns[index].type}`),
        details: [expect.objectContaining({ path: 'line 7', line: 7, column: index + 1 })],
      }),
    );
  });

  it('refuses text longer than its column', () => {
    expect(() => encoder.encode(['1', '', '', 'x'.repeat(256)], 9)).toThrow(
      expect.objectContaining({
        message: expect.stringContaining('line 9: column "label" holds at most 255 characters but the value has 256'),
      }),
    );
  });

  it.each([[['1', '2', 'true']], [['1', '2', 'true', 'a', 'extra']]])(
    'refuses a row of the wrong width, naming its line',
    (record) => {
      expect(() => encoder.encode(record, 5)).toThrow(
        expect.objectContaining({
          code: 'INVALID_CSV',
          message: expect.stringContaining(`line 5 has ${record.length} fields, the header has 4`),
        }),
      );
    },
  );
});
