import { isUtf8 } from 'node:buffer';

/**
 * Multi-row INSERT statements written as SQL text, for the hot bulk writes (batch results, async
 * outcomes, batch inputs). Going through knex's insert builder and the driver's placeholder
 * formatting cost about 15 µs of CPU per row (a general-purpose escaper on every value, then a scan
 * of the whole statement for placeholders); a 10,000-element batch spent more time there than in
 * the sandbox. Here every value becomes a literal whose meaning does not depend on escaping rules:
 * numbers as digits, dates as UTC text, a string that holds no quote, backslash, NUL or Ctrl-Z as
 * it is between single quotes (inside a quoted literal nothing else is special, in any sql_mode: a
 * line break is one more character of it, as decision records' pages' `\n`-separated ids), a Buffer of UTF-8 text holding none of those bytes likewise (the same bytes reach a
 * text or a binary column), and any other string or Buffer as a hexadecimal literal (`X'…'` of its
 * UTF-8 bytes, which MySQL stores in a text column as that text). Statements built here carry no
 * placeholders: database.ts sends a statement without values as written.
 */
export type SqlValue = string | number | boolean | Date | Buffer | null | undefined;

/** The bytes of the characters NEEDS_ESCAPING finds: a Buffer holding one goes as hex. */
const ESCAPED_BYTES = [0x27, 0x5c, 0x00, 0x1a];

/** A string holding none of these can go between single quotes as it is; one that does goes as hex. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL and Ctrl-Z are exactly what MySQL's quoting must escape.
const NEEDS_ESCAPING = /['\\\0\x1a]/;
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

/** The SQL literal of one value (null and undefined are NULL). */
export function sqlLiteral(value: SqlValue): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string')
    return NEEDS_ESCAPING.test(value) ? hexLiteral(Buffer.from(value, 'utf8')) : `'${value}'`;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`Cannot write ${value} to MySQL`);
    return String(value);
  }
  if (typeof value === 'boolean') return value ? '1' : '0';
  if (value instanceof Date) return dateLiteral(value);
  return quotable(value) ? `'${value.toString('utf8')}'` : hexLiteral(value);
}

/**
 * Whether bytes can go between single quotes as the text they encode: valid UTF-8 holding none of ESCAPED_BYTES.
 * Half the SQL of a hexadecimal literal, and nothing to convert on either side (decision records' pages are such
 * text, JSON, unless a value holds a quote or backslash); each test is one native pass over the bytes.
 */
function quotable(bytes: Buffer): boolean {
  if (bytes.length === 0 || !isUtf8(bytes)) return false;
  for (const byte of ESCAPED_BYTES) if (bytes.includes(byte)) return false;
  return true;
}

/**
 * `INSERT INTO table (columns) VALUES (…), (…) [suffix]`. Table and column names are the caller's
 * constants (checked to be plain identifiers); `suffix` (e.g. an ON DUPLICATE KEY clause) too.
 */
export function insertStatement(
  table: string,
  columns: readonly string[],
  rows: ReadonlyArray<readonly SqlValue[]>,
  suffix = '',
): string {
  for (const name of [table, ...columns])
    if (!IDENTIFIER.test(name)) throw new Error(`Not a plain SQL identifier: ${name}`);
  const values = new Array<string>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r];
    if (row.length !== columns.length)
      throw new Error(`Row ${r} has ${row.length} values for ${columns.length} columns`);
    let text = '(';
    for (let c = 0; c < row.length; c++) text += (c === 0 ? '' : ',') + sqlLiteral(row[c]);
    values[r] = `${text})`;
  }
  return `INSERT INTO \`${table}\` (${columns.map((name) => `\`${name}\``).join(',')}) VALUES ${values.join(',')}${suffix ? ` ${suffix}` : ''}`;
}

function hexLiteral(bytes: Buffer): string {
  return bytes.length === 0 ? "''" : `X'${bytes.toString('hex')}'`;
}

/** The `YYYY-MM-DD HH:MM:SS` text of the last second written: the dates of one statement or load mostly share it. */
let lastSecond = { second: NaN, text: '' };

/**
 * A DATETIME(3) value as MySQL writes it, `YYYY-MM-DD HH:MM:SS.mmm`, in UTC (the connection's time
 * zone is UTC, database.ts): the text of SQL literals here and of LOAD DATA fields (decision records).
 */
export function utcDatetimeText(date: Date): string {
  const time = date.getTime();
  if (!Number.isFinite(time)) throw new Error('Cannot write an invalid date to MySQL');
  const second = Math.floor(time / 1000);
  if (second !== lastSecond.second) {
    // toISOString is YYYY-MM-DDTHH:MM:SS.mmmZ for years 0–9999
    const iso = date.toISOString();
    lastSecond = { second, text: `${iso.slice(0, 10)} ${iso.slice(11, 19)}` };
  }
  const millis = time - second * 1000;
  return `${lastSecond.text}.${millis < 10 ? '00' : millis < 100 ? '0' : ''}${millis}`;
}

/** A DATETIME/TIMESTAMP literal in UTC, milliseconds included. */
function dateLiteral(date: Date): string {
  return `'${utcDatetimeText(date)}'`;
}
