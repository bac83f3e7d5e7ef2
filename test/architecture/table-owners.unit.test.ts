import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

/**
 * One owner per table (docs/architecture.md, "Boundaries as code"): each MySQL table is read and written by the
 * feature that owns it, and reached by the others through that feature's interfaces. This test reads the source:
 * a string literal of src/ that names a table (a Knex table argument such as `'users'` or `'scenarios as s'`, or
 * SQL text such as `FROM users`) must lie in the owner's folder. Migrations (src/db/migrations/) create every
 * table and are exempt.
 */
const OWNERS: Record<string, string> = {
  users: 'auth',
  scenarios: 'scenarios',
  scenario_versions: 'scenarios',
  scenario_test_cases: 'scenarios',
  run_results: 'execution',
  batches: 'execution',
  batch_chunks: 'execution',
  callback_attempts: 'execution',
  internal_collections: 'internal-data',
  decision_records: 'records',
  decision_record_pages: 'records',
  recording_settings: 'records',
  replays: 'replay',
  models: 'models',
  model_versions: 'models',
  run_statistics_seconds: 'statistics',
  run_statistics_latency: 'statistics',
  shadows: 'shadows',
  shadow_runs: 'shadows',
  splits: 'shadows',
  split_runs: 'shadows',
};

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return path.endsWith(join('db', 'migrations')) ? [] : sourceFiles(path);
    return /\.(ts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/** A source text without its comments. */
function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');
}

/** The string literals of code ('…', "…", `…`; template holes left in). */
function literals(code: string): string[] {
  return [...code.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)].map(
    (match) => match[1] ?? match[2] ?? match[3],
  );
}

/**
 * The tables code names: a literal handed to a call or assigned (`db('users')`, `.join('users as u', …)`,
 * `const TABLE = 'replays'`), or SQL text in a literal naming one after FROM / JOIN / INTO / UPDATE / TABLE.
 */
function tablesNamedBy(code: string): string[] {
  const named = new Set<string>();
  for (const match of code.matchAll(/[(=]\s*(['"`])([a-z_]+)(?:\s+as\s+\w+)?\1/gi)) {
    if (match[2] in OWNERS) named.add(match[2]);
  }
  for (const literal of literals(code)) {
    for (const match of literal.matchAll(/\b(?:from|join|into|update|table)\s+`?([a-z_]+)`?/gi)) {
      if (match[1] in OWNERS) named.add(match[1]);
    }
  }
  return [...named];
}

/** Every place outside its owner's folder that names a table, as `file: table (owner)`. */
function trespasses(): string[] {
  return sourceFiles(SRC).flatMap((file) => {
    const folder = relative(SRC, file).split(/[\\/]/)[0];
    const tables = tablesNamedBy(withoutComments(readFileSync(file, 'utf8')));
    return [...tables]
      .filter((table) => OWNERS[table] !== folder)
      .map((table) => `${relative(ROOT, file)}: ${table} (owned by ${OWNERS[table]})`);
  });
}

describe('one owner per table', () => {
  it('knows every table the migrations create', () => {
    const created = readdirSync(join(SRC, 'db', 'migrations')).flatMap((name) =>
      [...readFileSync(join(SRC, 'db', 'migrations', name), 'utf8').matchAll(/createTable\(\s*'([a-z_]+)'/g)].map(
        (match) => match[1],
      ),
    );
    expect([...new Set(created)].sort()).toEqual(Object.keys(OWNERS).sort());
  });

  it('finds a table named outside its owner (the check itself works)', () => {
    expect(tablesNamedBy("trx('scenarios as s').join('users as u', 'u.id', 's.owner_id')")).toEqual([
      'scenarios',
      'users',
    ]);
    expect(tablesNamedBy("const TABLE = 'replays';")).toEqual(['replays']);
    expect(tablesNamedBy("db.raw('SELECT id FROM `scenarios` s JOIN users u ON u.id = s.owner_id')")).toEqual([
      'scenarios',
      'users',
    ]);
    expect(
      tablesNamedBy("log('The scenarios of this user'); for (const kind of ['runs', 'replays']) count(kind);"),
    ).toEqual([]);
    expect(tablesNamedBy(withoutComments("trx('run_results') // db('users')"))).toEqual(['run_results']);
  });

  it("has every table read and written by its owner's folder only", () => {
    expect(trespasses()).toEqual([]);
  });
});
