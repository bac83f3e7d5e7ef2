import { randomUUID } from 'node:crypto';
import { afterAll, describe, it } from '@jest/globals';
import { applyTestEnvironment } from '../support/test-environment.js';
import { jobStoreContract } from './support/job-store-contract.js';

/**
 * The job store contract on MongoDB (@agendajs/mongo-backend), at JOBS_MONGODB_URL; skipped when it is not
 * set (no MongoDB server can be installed on these machines). Run it where one answers:
 *
 *   JOBS_MONGODB_URL=mongodb://127.0.0.1:27017 APP_ENV=test npm test -- test/execution/job-store-mongodb.test.ts
 *
 * The Mongo backend keeps every job in one collection and ignores JOBS_KEY_PREFIX, so each test gets a
 * database of its own (dropped afterwards).
 */
applyTestEnvironment();
const baseUrl = process.env.JOBS_MONGODB_URL;
const databases: string[] = [];

async function newJobsUrl(): Promise<string> {
  const url = new URL(baseUrl as string);
  const name = `scoring_jobs_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  url.pathname = `/${name}`;
  databases.push(url.toString());
  return url.toString();
}

afterAll(async () => {
  if (databases.length === 0) return;
  const { MongoClient } = await import('mongodb');
  for (const address of databases.splice(0)) {
    const client = new MongoClient(address, { serverSelectionTimeoutMS: 2000 });
    try {
      await client.connect();
      await client.db().dropDatabase();
    } finally {
      await client.close();
    }
  }
});

if (baseUrl) jobStoreContract('MongoDB (@agendajs/mongo-backend)', () => ({ newJobsUrl }));
else
  describe('MongoDB (@agendajs/mongo-backend) (job store contract)', () =>
    it.skip('needs JOBS_MONGODB_URL (no MongoDB server on these machines)', () => undefined));
