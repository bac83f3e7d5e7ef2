import { randomUUID } from 'node:crypto';
import { afterAll } from '@jest/globals';
import pg from 'pg';
import { applyTestEnvironment } from '../support/test-environment.js';
import { jobStoreContract } from './support/job-store-contract.js';

/**
 * The job store contract on PostgreSQL (@agendajs/postgres-backend), at JOBS_POSTGRES_URL (default: the
 * machine's PostgreSQL, database `scoring_jobs_test`, created when missing). The Postgres backend keeps
 * every job in one table and ignores JOBS_KEY_PREFIX, so each test gets a schema of its own, named in its
 * URL's `search_path`.
 */
applyTestEnvironment();
const baseUrl = process.env.JOBS_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/scoring_jobs_test';
const schemas: string[] = [];

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function ensureDatabase(): Promise<void> {
  const url = new URL(baseUrl);
  const name = url.pathname.slice(1);
  url.pathname = '/postgres';
  await withClient(url.toString(), async (client) => {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (!rowCount) await client.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`);
  });
}

let ready: Promise<void> | undefined;

async function newJobsUrl(): Promise<string> {
  ready ??= ensureDatabase();
  await ready;
  const schema = `jobs_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  await withClient(baseUrl, (client) => client.query(`CREATE SCHEMA ${schema}`));
  schemas.push(schema);
  const url = new URL(baseUrl);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return url.toString();
}

afterAll(async () => {
  if (schemas.length === 0) return;
  await withClient(baseUrl, async (client) => {
    for (const schema of schemas.splice(0)) await client.query(`DROP SCHEMA ${schema} CASCADE`);
  });
});

jobStoreContract('PostgreSQL (@agendajs/postgres-backend)', () => ({ newJobsUrl }));
