import type { Knex } from 'knex';

/** The `id` column of the rows a query finds, in its order: what sweeps and listings of string-keyed rows answer. */
export async function selectIds(query: Knex.QueryBuilder): Promise<string[]> {
  const rows = (await query.select('id')) as Array<{ id: string }>;
  return rows.map((row) => row.id);
}
