import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { jobStoreKind } from './job-store.js';

/** A delivery slot held by one callback attempt; released when the attempt is over. */
export interface SlotLease {
  release(): Promise<void>;
}

/**
 * Callback delivery slots per tenant (the run's user): at most `perTenant` attempts of one tenant in flight at
 * once. A tenant whose receiver is slow then holds at most that many; its other attempts wait as delayed jobs
 * instead of holding one of the worker's callback job slots (WORKER_CALLBACK_CONCURRENCY), which every tenant
 * shares. So a slow receiver delays only its own tenant.
 */
export interface CallbackSlots {
  /** A slot of `tenant`, or undefined when its slots are all taken. */
  tryTake(tenant: number): Promise<SlotLease | undefined>;
  close(): Promise<void>;
}

/** Slots counted in this process only: the cap holds per process (N worker processes let a tenant hold N × perTenant). */
export class ProcessCallbackSlots implements CallbackSlots {
  private readonly taken = new Map<number, number>();

  constructor(private readonly perTenant: number) {}

  async tryTake(tenant: number): Promise<SlotLease | undefined> {
    const held = this.taken.get(tenant) ?? 0;
    if (held >= this.perTenant) return undefined;
    this.taken.set(tenant, held + 1);
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        const left = (this.taken.get(tenant) ?? 1) - 1;
        if (left <= 0) this.taken.delete(tenant);
        else this.taken.set(tenant, left);
      },
    };
  }

  async close(): Promise<void> {}
}

/**
 * Takes a slot of KEYS[1] (a sorted set: lease id → expiry, ms by the Redis server's clock) when fewer than
 * ARGV[1] unexpired leases are held; the lease lasts ARGV[2] ms. Expired leases (of a process that died while it
 * delivered) are dropped first. Answers 1 when taken. One script, so two processes never both take the last slot.
 */
const TAKE_SLOT = `
if redis.replicate_commands then redis.replicate_commands() end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]))
return 1
`;

/**
 * Slots shared by every process of a deployment, in the job store's Redis (under its key prefix): the cap holds
 * across processes. Each slot is a lease that ends when the attempt releases it, or `leaseMs` after it was taken
 * if its process died meanwhile. When Redis cannot be asked (an outage), the attempt falls back to this process's
 * own slots (`fallback`), so deliveries go on with the per-process bound rather than stopping.
 */
export class RedisCallbackSlots implements CallbackSlots {
  private readonly client: Redis;
  private readonly fallback: ProcessCallbackSlots;

  constructor(
    redisUrl: string,
    private readonly keyPrefix: string,
    private readonly perTenant: number,
    private readonly leaseMs: number,
    private readonly logger: Logger,
  ) {
    this.client = new Redis(redisUrl, {
      lazyConnect: true,
      connectTimeout: 2000,
      maxRetriesPerRequest: 1,
      retryStrategy: (attempt: number) => Math.min(attempt * 100, 1000),
    });
    // Reported through the failed commands below; an unheard 'error' event would end the process.
    this.client.on('error', () => undefined);
    this.fallback = new ProcessCallbackSlots(perTenant);
  }

  async tryTake(tenant: number): Promise<SlotLease | undefined> {
    const key = `${this.keyPrefix}callback-slots:${tenant}`;
    const lease = randomUUID();
    let taken: unknown;
    try {
      taken = await this.client.eval(TAKE_SLOT, 1, key, this.perTenant, this.leaseMs, lease);
    } catch (error) {
      this.logger.warn(
        { err: error, tenant },
        "callback slots: Redis did not answer; this attempt counts against this process's own slots",
      );
      return this.fallback.tryTake(tenant);
    }
    if (Number(taken) !== 1) return undefined;
    let released = false;
    return {
      release: async () => {
        if (released) return;
        released = true;
        // A release that fails leaves the lease to expire (leaseMs).
        await this.client
          .zrem(key, lease)
          .catch((error: unknown) =>
            this.logger.warn(
              { err: error, tenant },
              'callback slots: a slot could not be released; it expires by itself',
            ),
          );
      },
    };
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/**
 * The deployment's slots: in the job store's Redis when JOBS_URL is Redis (shared by every process), else per
 * process (MongoDB and Postgres job stores; docs/adr/0012-callback-slots-in-redis.md).
 */
export function createCallbackSlots(options: {
  jobsUrl: string;
  keyPrefix: string;
  perTenant: number;
  leaseMs: number;
  logger: Logger;
}): CallbackSlots {
  if (jobStoreKind(options.jobsUrl) === 'redis')
    return new RedisCallbackSlots(
      options.jobsUrl,
      options.keyPrefix,
      options.perTenant,
      options.leaseMs,
      options.logger,
    );
  return new ProcessCallbackSlots(options.perTenant);
}
