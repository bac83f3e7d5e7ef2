import { Agenda, type AgendaBackend, type NotificationChannel } from 'agenda';
import { JobStoreUnavailableError } from './job-store-unavailable-error.js';
import { RedisJobNotifications } from './redis-job-notifications.js';
import { pipelineNewJobSaves } from './redis-job-saves.js';

/**
 * Agenda's job store is chosen by JOBS_URL: `mongodb://` (the design card's store), `redis://`
 * (what tests and local development use on these machines) or `postgres://`. Each backend is
 * Agenda 6's official one; each comes with a notification channel (for Redis our own, see
 * redis-job-notifications.ts), so a queued job starts within milliseconds instead of waiting for
 * the next poll. This module also owns the job store's connection health: what an outage looks
 * like to the rest of the service (docs/execution.md, "Outages").
 */
export type JobStoreKind = 'mongodb' | 'redis' | 'postgres';

export function jobStoreKind(jobsUrl: string): JobStoreKind {
  const scheme = jobsUrl.split(':', 1)[0]?.toLowerCase();
  if (scheme === 'mongodb' || scheme === 'mongodb+srv') return 'mongodb';
  if (scheme === 'redis' || scheme === 'rediss') return 'redis';
  if (scheme === 'postgres' || scheme === 'postgresql') return 'postgres';
  throw new Error(`JOBS_URL must start with mongodb://, redis:// or postgres://; got "${scheme}:"`);
}

/** What the job store connection reports to its owner (the execution queue logs these). */
export interface JobStoreEvents {
  /** The connection was lost (`reason` says why); work cannot be queued until `onRestored`. */
  onLost(reason: string): void;
  onRestored(): void;
  /** Any other error of the store's clients (they reconnect by themselves). */
  onError(error: Error): void;
}

/** An open job store: an Agenda backend, already connected, and what this process knows of its health. */
export interface JobStore {
  readonly backend: AgendaBackend;
  readonly notifications?: NotificationChannel;
  /** Why the store cannot take work now, as far as this process can tell; undefined when it can. */
  unavailableReason(): string | undefined;
  close(): Promise<void>;
}

/**
 * How the Redis connection behaves when Redis goes away: a command waits for at most one
 * reconnection attempt before it fails (so a submission answers 503 at once instead of hanging),
 * and reconnection is tried forever, at most a second apart (so the service recovers within a
 * second of Redis's return, without a restart).
 */
const REDIS_OPTIONS = {
  lazyConnect: true,
  connectTimeout: 2000,
  maxRetriesPerRequest: 1,
  retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
} as const;

async function openRedisJobStore(jobsUrl: string, keyPrefix: string, events: JobStoreEvents): Promise<JobStore> {
  const [{ Redis }, { RedisBackend }] = await Promise.all([import('ioredis'), import('@agendajs/redis-backend')]);
  const client = new Redis(jobsUrl, REDIS_OPTIONS);
  let lastError: Error | undefined;
  let lost = false;
  let closing = false;
  // While the connection is down every reconnection attempt fails; onLost says so once.
  const onError = (error: Error): void => {
    if (!lost && !closing) events.onError(error);
  };
  client.on('error', (error: Error) => {
    lastError = error;
    onError(error);
  });
  try {
    await client.connect();
  } catch (error) {
    client.disconnect();
    // ioredis reports "Connection is closed."; the socket's own error says why (ECONNREFUSED, a time-out).
    throw new JobStoreUnavailableError(
      `Redis at ${redisAddress(jobsUrl)} is unreachable: ${(lastError ?? (error as Error)).message}`,
      { cause: error },
    );
  }
  client.on('close', () => {
    if (lost || closing) return;
    lost = true;
    events.onLost(lastError?.message ?? 'connection closed');
  });
  client.on('ready', () => {
    lastError = undefined;
    if (!lost) return;
    lost = false;
    events.onRestored();
  });
  const channelName = `${keyPrefix}notifications`;
  // Given a client, the backend leaves its connection to us (ownsConnection false): we close it.
  const backend = new RedisBackend({ redis: client, keyPrefix, channelName });
  await backend.connect();
  pipelineNewJobSaves(backend.repository);
  const notifications = new RedisJobNotifications(client, channelName, onError);
  return {
    backend,
    notifications,
    unavailableReason: () =>
      client.status === 'ready'
        ? undefined
        : `Redis at ${redisAddress(jobsUrl)} is ${client.status}${lastError ? ` (${lastError.message})` : ''}`,
    async close() {
      closing = true;
      await notifications.disconnect();
      client.disconnect();
    },
  };
}

function redisAddress(jobsUrl: string): string {
  const url = new URL(jobsUrl);
  return `${url.hostname}:${url.port || 6379}`;
}

/**
 * MongoDB and PostgreSQL: Agenda's official backends as they are. Their notification channels
 * also report errors as 'error' events, so a listener is attached (an unheard 'error' event ends
 * the process). Outages of these stores are not probed ahead: an enqueue fails with the driver's
 * own error (and answers 503).
 */
async function openOtherJobStore(
  kind: 'postgres' | 'mongodb',
  jobsUrl: string,
  events: JobStoreEvents,
): Promise<JobStore> {
  let backend: AgendaBackend;
  if (kind === 'postgres') {
    const { PostgresBackend } = await import('@agendajs/postgres-backend');
    backend = new PostgresBackend({ connectionString: jobsUrl });
  } else {
    const { MongoBackend } = await import('@agendajs/mongo-backend');
    backend = new MongoBackend({ address: jobsUrl });
  }
  backend.notificationChannel?.on('error', events.onError);
  try {
    await backend.connect();
  } catch (error) {
    await backend.disconnect().catch(() => undefined);
    throw new JobStoreUnavailableError(`The job store is unreachable: ${(error as Error).message}`, { cause: error });
  }
  return {
    backend,
    notifications: backend.notificationChannel,
    unavailableReason: () => undefined,
    async close() {
      await backend.notificationChannel?.disconnect().catch(() => undefined);
      await backend.disconnect();
    },
  };
}

/** Connects to the job store named by JOBS_URL (rejects with JobStoreUnavailableError when it does not answer). */
export async function openJobStore(jobsUrl: string, keyPrefix: string, events: JobStoreEvents): Promise<JobStore> {
  const kind = jobStoreKind(jobsUrl);
  return kind === 'redis' ? openRedisJobStore(jobsUrl, keyPrefix, events) : openOtherJobStore(kind, jobsUrl, events);
}

export interface AgendaSettings {
  /** Jobs of one name a process runs at once. */
  concurrency: number;
  /** Lock lifetime: a job held by a dead process is picked up again after this long. */
  lockLifetimeMs: number;
  /** Safety-net poll; notifications normally wake workers at once. */
  processEveryMs: number;
}

/**
 * An Agenda on an open job store. Agenda connects its backend in its constructor and leaves a
 * failed connect as an unhandled rejection (which ends the process), so it is given a view of the
 * backend whose connect() has nothing left to do: the store was connected by openJobStore, where a
 * failure is an ordinary error.
 */
export function createAgenda(store: JobStore, settings: AgendaSettings): Agenda {
  const { backend } = store;
  const connected: AgendaBackend = {
    name: backend.name,
    repository: backend.repository,
    notificationChannel: store.notifications,
    logger: backend.logger,
    ownsConnection: false,
    connect: async () => undefined,
    disconnect: () => store.close(),
  };
  return new Agenda({
    backend: connected,
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
      const client = new Redis(jobsUrl, {
        lazyConnect: true,
        connectTimeout: timeoutMs,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
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
