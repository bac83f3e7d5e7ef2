import { createHash } from 'node:crypto';
import { BadRequestError } from '../errors/bad-request-error.js';

/** Collection names: a letter, then letters, digits or underscores; at most 64 characters (the spec's path pattern). */
export const COLLECTION_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/** Column names (CSV headers): a letter or underscore, then letters, digits or underscores; at most 64 characters. */
const COLUMN_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** The hidden primary key of every collection table (load order); no CSV column may take its name. */
export const ROW_ID_COLUMN = '_row_id';

/** Most columns a collection may have (MySQL allows more, but its 65,535-byte row limit bites first). */
const MAX_COLUMNS = 200;

/**
 * Repeated here (the spec rejects bad path names first) because the engine's lookups reach the
 * service without HTTP, and a name ends up next to SQL.
 */
export function assertCollectionName(name: string): void {
  if (typeof name !== 'string' || !COLLECTION_NAME.test(name)) {
    throw new BadRequestError(
      `Invalid collection name "${String(name).slice(0, 80)}": use a letter, then letters, digits or underscores, at most 64 characters.`,
      'INVALID_COLLECTION_NAME',
      [{ path: 'collection_name', message: 'must match ^[A-Za-z][A-Za-z0-9_]{0,63}$' }],
    );
  }
}

/**
 * Checks a CSV header: every name valid, none repeated (MySQL column names ignore case, so
 * `Age` and `age` are the same column), none reserved. Answers 400 INVALID_CSV naming each column.
 */
export function assertHeader(header: string[]): void {
  const problems: Array<{ path: string; message: string; column: number }> = [];
  const seen = new Map<string, number>();
  if (header.length > MAX_COLUMNS) {
    throw new BadRequestError(
      `The header has ${header.length} columns; a collection holds at most ${MAX_COLUMNS}.`,
      'INVALID_CSV',
      [{ path: 'line 1', message: `at most ${MAX_COLUMNS} columns` }],
    );
  }
  header.forEach((name, index) => {
    const position = index + 1;
    if (name === '') {
      problems.push({
        path: `line 1, column ${position}`,
        message: `column ${position} has an empty name`,
        column: position,
      });
    } else if (!COLUMN_NAME.test(name)) {
      problems.push({
        path: `line 1, column ${position}`,
        message: `invalid column name "${name.slice(0, 80)}": use a letter or underscore, then letters, digits or underscores, at most 64 characters`,
        column: position,
      });
    } else if (name.toLowerCase() === ROW_ID_COLUMN) {
      problems.push({
        path: `line 1, column ${position}`,
        message: `column name "${name}" is reserved`,
        column: position,
      });
    } else {
      const first = seen.get(name.toLowerCase());
      if (first !== undefined) {
        problems.push({
          path: `line 1, column ${position}`,
          message: `duplicate column name "${name}" (same as column ${first}, "${header[first - 1]}"; names ignore case)`,
          column: position,
        });
      } else {
        seen.set(name.toLowerCase(), position);
      }
    }
  });
  if (problems.length > 0) {
    throw new BadRequestError(
      `Invalid CSV header: ${problems.map((problem) => problem.message).join('; ')}.`,
      'INVALID_CSV',
      problems,
    );
  }
}

/** One entry of the `indexes` parameter: `column,true` (UNIQUE) or `column,false` (plain). */
export interface IndexRequest {
  column: string;
  unique: boolean;
}

/**
 * Parses `column,true;column2,false` against the collection's columns (matched ignoring case,
 * answered with the collection's spelling). Empty entries (a trailing `;`) are ignored. Every
 * problem is reported at once: 400 INVALID_INDEXES.
 */
export function parseIndexes(raw: string | undefined, columns: readonly string[]): IndexRequest[] {
  if (raw === undefined || raw.trim() === '') return [];
  const byLowerName = new Map(columns.map((column) => [column.toLowerCase(), column]));
  const requests: IndexRequest[] = [];
  const problems: Array<{ path: string; message: string }> = [];
  const seen = new Set<string>();
  raw.split(';').forEach((entry, index) => {
    const text = entry.trim();
    if (text === '') return;
    const path = `indexes[${index}]`;
    const parts = text.split(',').map((part) => part.trim());
    if (parts.length !== 2 || parts[0] === '' || !/^(true|false)$/i.test(parts[1])) {
      problems.push({
        path,
        message: `malformed entry "${text.slice(0, 80)}": expected "column,true" (unique) or "column,false" (plain)`,
      });
      return;
    }
    const column = byLowerName.get(parts[0].toLowerCase());
    if (!column) {
      problems.push({ path, message: `unknown column "${parts[0].slice(0, 80)}"` });
      return;
    }
    const unique = parts[1].toLowerCase() === 'true';
    const key = `${column.toLowerCase()}:${unique}`;
    if (seen.has(key)) {
      problems.push({ path, message: `column "${column}" is listed twice` });
      return;
    }
    seen.add(key);
    requests.push({ column, unique });
  });
  if (problems.length > 0) {
    throw new BadRequestError(
      `Invalid indexes: ${problems.map((problem) => problem.message).join('; ')}.`,
      'INVALID_INDEXES',
      problems,
    );
  }
  return requests;
}

/** `ux_<column>` for a UNIQUE index, `ix_<column>` for a plain one; shortened with a hash past MySQL's 64 characters. */
export function indexName(request: IndexRequest): string {
  const name = `${request.unique ? 'ux' : 'ix'}_${request.column}`;
  if (name.length <= 64) return name;
  const hash = createHash('sha1').update(request.column.toLowerCase()).digest('hex').slice(0, 8);
  return `${name.slice(0, 55)}_${hash}`;
}

/** The table of a registry entry: user-chosen names never become table names. */
export function tableName(collectionId: number): string {
  return `idc_${collectionId}`;
}
