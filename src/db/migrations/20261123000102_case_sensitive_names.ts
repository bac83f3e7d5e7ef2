import type { Knex } from 'knex';

/**
 * Usernames, scenario names and collection names are case-sensitive and never begin or end with
 * whitespace (issue 9). Databases created by `npm run migrate` always had a binary collation, but
 * one created beforehand by an operator takes the server's default (often `utf8mb4_general_ci`):
 * there a token for `ALICE` acted as `alice`, and `CREDIT-DECISION` was `credit-decision`. This
 * migration gives those columns, and the database's default, the binary collation `utf8mb4_bin`.
 *
 * No row is lost or merged. Names with surrounding whitespace (older versions let scenario names
 * end with spaces) are trimmed; where the trimmed name is already taken (equal ignoring case, so
 * the rename is safe under any old collation) the row's id is appended instead. Each rename, and
 * every group of names that differ only in case (one name under the old collation, now distinct),
 * is reported on stderr (console.warn) for the operator.
 */

interface NameColumn {
  table: string;
  column: string;
  length: number;
  /** The column the name is unique within (none: unique in the table). */
  scope?: string;
  /** What the name is, in the report. */
  kind: string;
}

const NAME_COLUMNS: NameColumn[] = [
  { table: 'users', column: 'username', length: 190, kind: 'username' },
  { table: 'scenarios', column: 'name', length: 190, scope: 'owner_id', kind: 'scenario name' },
  { table: 'internal_collections', column: 'name', length: 64, scope: 'owner_id', kind: 'collection name' },
];

/** Scenario names recorded with runs: converted so look-ups by name behave the same; never renamed (history). */
const RECORDED_NAME_COLUMNS: NameColumn[] = [
  { table: 'run_results', column: 'scenario_name', length: 190, kind: 'scenario name' },
  { table: 'batches', column: 'scenario_name', length: 190, kind: 'scenario name' },
];

const COLLATION = 'utf8mb4_bin';
const PREFIX = 'migration 20261123000102_case_sensitive_names:';

interface NameRow {
  id: number;
  scope: number | null;
  name: string;
}

export interface Rename {
  table: string;
  id: number;
  from: string;
  to: string;
}

/** How names compared under the loosest old collation: ignoring case and trailing spaces. */
const fold = (name: string) => name.trimEnd().toLowerCase();

/** New names for every name with surrounding whitespace, unique within their scope under any old or new collation. */
export function planRenames(table: string, rows: NameRow[], maxLength: number): Rename[] {
  const renames: Rename[] = [];
  const byScope = new Map<number | null, NameRow[]>();
  for (const row of rows) byScope.set(row.scope, [...(byScope.get(row.scope) ?? []), row]);
  for (const scoped of byScope.values()) {
    const padded = scoped.filter((row) => row.name !== row.name.trim()).sort((a, b) => a.id - b.id);
    const taken = new Set(scoped.filter((row) => row.name === row.name.trim()).map((row) => fold(row.name)));
    for (const row of padded) {
      const base = row.name.trim() || 'unnamed';
      let to = base.slice(0, maxLength);
      for (let attempt = 1; taken.has(fold(to)); attempt += 1) {
        const suffix = attempt === 1 ? `_${row.id}` : `_${row.id}_${attempt}`;
        to = `${base.slice(0, maxLength - suffix.length)}${suffix}`;
      }
      taken.add(fold(to));
      renames.push({ table, id: row.id, from: row.name, to });
    }
  }
  return renames;
}

/** Groups of names in one scope that differ only in case. */
function caseVariants(rows: NameRow[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const row of rows) {
    const key = `${row.scope ?? ''}\u0000${row.name.toLowerCase()}`;
    groups.set(key, [...(groups.get(key) ?? []), row.name]);
  }
  return [...groups.values()].filter((names) => names.length > 1);
}

async function columnCollation(db: Knex, table: string, column: string): Promise<string | undefined> {
  const [rows] = (await db.raw(
    'SELECT COLLATION_NAME AS collation FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?',
    [table, column],
  )) as [Array<{ collation: string | null }>];
  return rows[0]?.collation ?? undefined;
}

async function tableCollation(db: Knex, table: string): Promise<string | undefined> {
  const [rows] = (await db.raw(
    'SELECT TABLE_COLLATION AS collation FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?',
    [table],
  )) as [Array<{ collation: string | null }>];
  return rows[0]?.collation ?? undefined;
}

/** The column, and the table's default for columns added later, in the binary collation; nothing is done where it already is. */
async function useBinaryCollation(db: Knex, { table, column, length }: NameColumn): Promise<void> {
  if ((await columnCollation(db, table, column)) !== COLLATION) {
    // MODIFY keeps the column's unique index, rebuilt under the new collation.
    await db.raw(`ALTER TABLE ?? MODIFY ?? VARCHAR(${length}) CHARACTER SET utf8mb4 COLLATE ${COLLATION} NOT NULL`, [
      table,
      column,
    ]);
  }
  if ((await tableCollation(db, table)) !== COLLATION)
    await db.raw(`ALTER TABLE ?? CHARACTER SET utf8mb4 COLLATE ${COLLATION}`, [table]);
}

export async function up(db: Knex): Promise<void> {
  const [[{ name: database, collation }]] = (await db.raw(
    'SELECT DATABASE() AS name, @@collation_database AS collation',
  )) as [Array<{ name: string; collation: string }>];
  // New tables of later migrations get the binary collation too.
  if (collation !== COLLATION) await db.raw(`ALTER DATABASE ?? CHARACTER SET utf8mb4 COLLATE ${COLLATION}`, [database]);
  for (const target of NAME_COLUMNS) {
    const select = [
      `id`,
      `${target.column} as name`,
      target.scope ? `${target.scope} as scope` : db.raw('NULL as scope'),
    ];
    const rows = (await db(target.table).select(select).orderBy('id')) as NameRow[];
    // Renamed before the collation changes: the new names are unique under the old collation as well.
    for (const rename of planRenames(target.table, rows, target.length)) {
      await db(target.table)
        .where({ id: rename.id })
        .update({ [target.column]: rename.to });
      console.warn(
        `${PREFIX} ${target.kind} ${JSON.stringify(rename.from)} (${target.table} id ${rename.id}) had surrounding whitespace and is now ${JSON.stringify(rename.to)}`,
      );
    }
    await useBinaryCollation(db, target);
    const renamed = (await db(target.table).select(select).orderBy('id')) as NameRow[];
    for (const group of caseVariants(renamed)) {
      console.warn(
        `${PREFIX} ${target.kind}s ${group.map((name) => JSON.stringify(name)).join(', ')} differ only in case: they are distinct ${target.kind}s, and callers must use the exact case`,
      );
    }
  }
  for (const target of RECORDED_NAME_COLUMNS) await useBinaryCollation(db, target);
}

/** Nothing to undo: binary collation and trimmed names are valid under the previous schema as well. */
export async function down(): Promise<void> {}
