import fc from 'fast-check';
import { hostileStrings, type FuzzBody } from './hostile-values.js';

/**
 * multipart/form-data uploads of CSV files: well-formed ones with CSVs of every shape (ragged rows,
 * odd encodings, numbers out of range, huge), and broken ones (wrong or missing boundary, cut
 * short, the file sent as a text field, two files, too many fields).
 */

export interface MultipartRequest {
  contentType: string;
  body: FuzzBody;
  variant?: string;
}

const columnNames = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[a-z][a-z0-9_]{0,11}$/) },
  { weight: 1, arbitrary: hostileStrings },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'id',
      'ID',
      'Id',
      'customer_id',
      'select',
      'from',
      'where',
      'a b',
      'a-b',
      '1col',
      '_x',
      'x'.repeat(64),
      'x'.repeat(65),
      'é',
      '`',
      '"',
      '',
    ),
  },
);

const cells = fc.oneof(
  { weight: 3, arbitrary: fc.integer().map(String) },
  { weight: 2, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map(String) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: hostileStrings },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      'true',
      'false',
      'TRUE',
      '2024-01-31',
      '2024-02-30',
      '2024-01-31T10:00:00Z',
      '1e400',
      '-1e400',
      '99999999999999999999999',
      '0.1e-400',
      '-0',
      '00012',
      '1,5',
      ' 7 ',
      'NULL',
      '\\N',
      'NaN',
    ),
  },
);

/** A CSV cell as a careful writer writes it (quoted when it must be). */
function quoted(cell: string): string {
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** CSV texts: random headers, or `knownHeaders` (an existing collection's columns) with rows of any cells. */
export function csvTexts(knownHeaders: string[][] = []): fc.Arbitrary<string> {
  const headers = fc.array(columnNames, { minLength: 1, maxLength: 8 });
  return fc
    .record({
      columns: knownHeaders.length > 0 ? fc.oneof(headers, fc.constantFrom(...knownHeaders)) : headers,
      rows: fc.array(fc.array(cells, { minLength: 0, maxLength: 10 }), { maxLength: 12 }),
      ragged: fc.boolean(),
      eol: fc.constantFrom('\n', '\r\n', '\r'),
      bom: fc.boolean(),
      quote: fc.constantFrom('careful', 'never', 'unbalanced'),
      trailingNewline: fc.boolean(),
    })
    .map(({ columns, rows, ragged, eol, bom, quote, trailingNewline }) => {
      const cell = (value: string) => (quote === 'careful' ? quoted(value) : quote === 'never' ? value : `"${value}`);
      const width = columns.length;
      const lines = [
        columns.map(cell).join(','),
        ...rows.map((row) => {
          const fitted = ragged ? row : Array.from({ length: width }, (_unused, index) => row[index] ?? '');
          return fitted.map(cell).join(',');
        }),
      ];
      return (bom ? '\uFEFF' : '') + lines.join(eol) + (trailingNewline ? eol : '');
    });
}

const CSV_MUTATIONS = [
  'replace-field',
  'duplicate-line',
  'remove-line',
  'add-field',
  'remove-field',
  'upper-case-field',
] as const;

/** `seed` (a CSV that loads) with one to three lines changed: a field replaced, added or removed, a line duplicated or removed. */
export function mutatedCsv(seed: string): fc.Arbitrary<string> {
  const delimiter = (seed.split('\n')[0] ?? '').includes(';') ? ';' : ',';
  const step = fc.record({
    line: fc.nat(),
    field: fc.nat(),
    how: fc.constantFrom(...CSV_MUTATIONS),
    value: fc.oneof(cells, hostileStrings),
  });
  return fc.array(step, { minLength: 1, maxLength: 3 }).map((steps) => {
    const lines = seed.replace(/\n$/, '').split('\n');
    for (const { line, field, how, value } of steps) {
      const at = line % lines.length;
      const fields = lines[at].split(delimiter);
      const index = field % fields.length;
      if (how === 'duplicate-line') lines.splice(at, 0, lines[at]);
      else if (how === 'remove-line') lines.splice(at, 1);
      else {
        if (how === 'replace-field') fields[index] = quoted(value);
        else if (how === 'add-field') fields.splice(index, 0, quoted(value));
        else if (how === 'remove-field') fields.splice(index, 1);
        else fields[index] = fields[index].toUpperCase();
        lines[at] = fields.join(delimiter);
      }
      if (lines.length === 0) lines.push('');
    }
    return `${lines.join('\n')}\n`;
  });
}

function part(boundary: string, headers: string[], content: string): string {
  return `--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n${content}\r\n`;
}

function fileHeaders(name: string, fileName: string, type = 'text/csv'): string[] {
  return [`Content-Disposition: form-data; name="${name}"; filename="${fileName}"`, `Content-Type: ${type}`];
}

const fileNames = fc.oneof(
  { weight: 5, arbitrary: fc.constant('data.csv') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '../../etc/passwd',
      'a"b.csv',
      'x'.repeat(300),
      'é.csv',
      '',
      '.csv',
      'a\\b.csv',
      'a;b.csv',
      'CON',
    ),
  },
);

const KINDS = [
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'valid',
  'large',
  'wide',
  'binary',
  'wrong-boundary',
  'cut-short',
  'no-closing-boundary',
  'no-boundary-parameter',
  'quoted-boundary',
  'text-field-named-file',
  'other-field-only',
  'two-files',
  'too-many-fields',
  'lf-only',
  'mixed-subtype',
  'empty',
  'garbage',
] as const;

/**
 * A multipart upload of one CSV under the field `file`, or a broken variant of it. The CSV is a
 * random one or, given `seeds` (CSVs the operation accepts), one of them as is or changed.
 */
export function multipartUploads(seeds: string[] = []): fc.Arbitrary<MultipartRequest> {
  const knownHeaders = seeds.map((seed) => (seed.split('\n')[0] ?? '').split(/[;,]/));
  const csv =
    seeds.length > 0
      ? fc.oneof(
          { weight: 2, arbitrary: csvTexts(knownHeaders) },
          { weight: 1, arbitrary: fc.constantFrom(...seeds) },
          { weight: 3, arbitrary: fc.oneof(...seeds.map(mutatedCsv)) },
        )
      : csvTexts();
  return fc
    .record({
      kind: fc.constantFrom(...KINDS),
      csv,
      fileName: fileNames,
      // Token characters only: unquoted, a boundary may not hold the tspecials ( ) , and others (the quoted-boundary variant has them).
      boundary: fc.stringMatching(/^[A-Za-z0-9'+_.-]{1,40}$/),
      cut: fc.double({ min: 0, max: 1, noNaN: true }),
      garbage: fc.uint8Array({ maxLength: 300 }),
    })
    .map(({ kind, csv, fileName, boundary, cut, garbage }): MultipartRequest => {
      const type = `multipart/form-data; boundary=${boundary}`;
      const end = `--${boundary}--\r\n`;
      const valid = part(boundary, fileHeaders('file', fileName), csv) + end;
      switch (kind) {
        case 'valid':
          return { contentType: type, body: { text: valid } };
        case 'large':
          return {
            contentType: type,
            variant: 'multipart:large-csv',
            body: {
              repeat: {
                head: `--${boundary}\r\n${fileHeaders('file', 'big.csv').join('\r\n')}\r\n\r\nid,name,amount\r\n`,
                unit: '12345,"some, name",1234.5\r\n',
                count: 40_000,
                tail: `\r\n${end}`,
              },
            },
          };
        case 'wide':
          return {
            contentType: type,
            variant: 'multipart:wide-csv',
            body: {
              text:
                part(
                  boundary,
                  fileHeaders('file', 'wide.csv'),
                  `${Array.from({ length: 3000 }, (_u, i) => `c${i}`).join(',')}\n${Array.from({ length: 3000 }, (_u, i) => i).join(',')}\n`,
                ) + end,
            },
          };
        case 'binary':
          return {
            contentType: type,
            variant: 'multipart:binary-file',
            body: {
              bytes: Buffer.concat([
                Buffer.from(
                  `--${boundary}\r\n${fileHeaders('file', 'bin.csv', 'application/octet-stream').join('\r\n')}\r\n\r\na,b\n`,
                ),
                Buffer.from(garbage),
                Buffer.from(`\r\n${end}`),
              ]).toString('base64'),
            },
          };
        case 'wrong-boundary':
          return {
            contentType: `multipart/form-data; boundary=not-${boundary}`,
            variant: 'multipart:wrong-boundary',
            body: { text: valid },
          };
        case 'cut-short':
          return {
            contentType: type,
            variant: 'multipart:cut-short',
            body: { text: valid.slice(0, Math.floor(valid.length * cut)) },
          };
        case 'no-closing-boundary':
          return {
            contentType: type,
            variant: 'multipart:no-closing-boundary',
            body: { text: part(boundary, fileHeaders('file', fileName), csv) },
          };
        case 'no-boundary-parameter':
          return {
            contentType: 'multipart/form-data',
            variant: 'multipart:no-boundary-parameter',
            body: { text: valid },
          };
        case 'quoted-boundary': {
          const special = `${boundary}(a),b`;
          return {
            contentType: `multipart/form-data; boundary="${special}"`,
            variant: 'multipart:quoted-boundary',
            body: { text: `${part(special, fileHeaders('file', fileName), csv)}--${special}--\r\n` },
          };
        }
        case 'text-field-named-file':
          return {
            contentType: type,
            variant: 'multipart:text-field-named-file',
            body: { text: part(boundary, ['Content-Disposition: form-data; name="file"'], csv) + end },
          };
        case 'other-field-only':
          return {
            contentType: type,
            variant: 'multipart:no-file-field',
            body: { text: part(boundary, fileHeaders('upload', fileName), csv) + end },
          };
        case 'two-files':
          return {
            contentType: type,
            variant: 'multipart:two-files',
            body: {
              text:
                part(boundary, fileHeaders('file', 'a.csv'), csv) +
                part(boundary, fileHeaders('file', 'b.csv'), csv) +
                end,
            },
          };
        case 'too-many-fields':
          return {
            contentType: type,
            variant: 'multipart:too-many-fields',
            body: {
              text:
                Array.from({ length: 12 }, (_u, i) =>
                  part(boundary, [`Content-Disposition: form-data; name="f${i}"`], 'x'),
                ).join('') +
                part(boundary, fileHeaders('file', fileName), csv) +
                end,
            },
          };
        case 'lf-only':
          return {
            contentType: type,
            variant: 'multipart:lf-line-endings',
            body: { text: valid.replace(/\r\n/g, '\n') },
          };
        case 'mixed-subtype':
          return {
            contentType: `multipart/mixed; boundary=${boundary}`,
            variant: 'multipart:mixed-subtype',
            body: { text: valid },
          };
        case 'empty':
          return { contentType: type, variant: 'multipart:empty', body: { text: '' } };
        case 'garbage':
          return {
            contentType: type,
            variant: 'multipart:garbage',
            body: { bytes: Buffer.from(garbage).toString('base64') },
          };
        default:
          throw new Error(`unknown multipart kind ${String(kind)}`);
      }
    });
}

/** A well-formed upload of `csv` (fixtures). */
export function multipartOf(csv: string, boundary = 'fuzzboundary'): MultipartRequest {
  return {
    contentType: `multipart/form-data; boundary=${boundary}`,
    body: { text: `${part(boundary, fileHeaders('file', 'data.csv'), csv)}--${boundary}--\r\n` },
  };
}
