import { Agenda, type AgendaBackend } from 'agenda';

/**
 * Agenda's job store is chosen by JOBS_URL: `mongodb://` (the design card's store), `redis://`
 * (what tests and local development use on these machines) or `postgres://`. Each backend is
 * Agenda 6's official one and brings its own notification channel, so a queued job starts within
 * milliseconds instead of waiting for the next poll.
 */
export type JobStoreKind = 'mongodb' | 'redis' | 'postgres';

export function jobStoreKind(jobsUrl: string): JobStoreKind {
  const scheme = jobsUrl.split(':', 1)[0]?.toLowerCase();
  if (scheme === 'mongodb' || scheme === 'mongodb+srv') return 'mongodb';
  if (scheme === 'redis' || scheme === 'rediss') return 'redis';
  if (scheme === 'postgres' || scheme === 'postgresql') return 'postgres';
  throw new Error(`JOBS_URL must start with mongodb://, redis:// or postgres://; got "${scheme}:"`);
}

export async function createJobBackend(jobsUrl: string, keyPrefix = 'scoring:'): Promise<AgendaBackend> {
  switch (jobStoreKind(jobsUrl)) {
    case 'redis': {
      const { RedisBackend } = await import('@agendajs/redis-backend');
      return new RedisBackend({ connectionString: jobsUrl, keyPrefix, channelName: `${keyPrefix}notifications` });
    }
    case 'postgres': {
      const { PostgresBackend } = await import('@agendajs/postgres-backend');
      return new PostgresBackend({ connectionString: jobsUrl });
    }
    case 'mongodb': {
      const { MongoBackend } = await import('@agendajs/mongo-backend');
      return new MongoBackend({ address: jobsUrl });
    }
  }
}

export interface AgendaSettings {
  /** Jobs of one name a process runs at once. */
  concurrency: number;
  /** Lock lifetime: a job held by a dead process is picked up again after this long. */
  lockLifetimeMs: number;
  /** Safety-net poll; notifications normally wake workers at once. */
  processEveryMs: number;
}

export async function createAgenda(jobsUrl: string, settings: AgendaSettings, keyPrefix?: string): Promise<Agenda> {
  const backend = await createJobBackend(jobsUrl, keyPrefix);
  return new Agenda({
    backend,
    defaultConcurrency: settings.concurrency,
    maxConcurrency: settings.concurrency * 4,
    defaultLockLimit: settings.concurrency,
    defaultLockLifetime: settings.lockLifetimeMs,
    processEvery: settings.processEveryMs,
    removeOnComplete: true,
  });
}

/** A cheap round trip to the job store, for start-up checks and readiness. */
export async function pingJobStore(jobsUrl: string, timeoutMs = 2000): Promise<void> {
  switch (jobStoreKind(jobsUrl)) {
    case 'redis': {
      const { Redis } = await import('ioredis');
      const client = new Redis(jobsUrl, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.ping();
      } finally {
        client.disconnect();
      }
      return;
    }
    case 'postgres': {
      const pg = await import('pg');
      const client = new pg.default.Client({ connectionString: jobsUrl, connectionTimeoutMillis: timeoutMs });
      try {
        await client.connect();
        await client.query('SELECT 1');
      } finally {
        await client.end().catch(() => undefined);
      }
      return;
    }
    case 'mongodb': {
      const { MongoClient } = await import('mongodb');
      const client = new MongoClient(jobsUrl, { serverSelectionTimeoutMS: timeoutMs });
      try {
        await client.connect();
        await client.db().command({ ping: 1 });
      } finally {
        await client.close().catch(() => undefined);
      }
    }
  }
}
