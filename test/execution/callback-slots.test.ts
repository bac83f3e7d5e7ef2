import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { pino } from 'pino';
import request from 'supertest';
import { RedisCallbackSlots, type SlotLease } from '../../src/execution/callback-slots.js';
import { createTestApp, type TestApp, type TestUser } from '../support/test-app.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { deployScenario, doublingScenario } from '../support/scenario-fixtures.js';
import { isolateJobStore, waitFor } from './support.js';

/**
 * Callback delivery slots per tenant hold across processes (CALLBACK_SLOTS_PER_TENANT): leases in the job store's
 * Redis (src/execution/callback-slots.ts), against the real Redis.
 */

applyTestEnvironment();
const redisUrl = process.env.JOBS_URL as string;
const silent = pino({ level: 'silent' });

describe('slots in Redis', () => {
  const prefix = `scoring:test:callback-slots:${randomUUID().slice(0, 8)}:`;
  // Two processes' slots: two clients on one key prefix.
  const first = new RedisCallbackSlots(redisUrl, prefix, 2, 60_000, silent);
  const second = new RedisCallbackSlots(redisUrl, prefix, 2, 60_000, silent);
  afterAll(async () => Promise.all([first.close(), second.close()]));

  it("caps a tenant's slots across processes, and frees one when it is released", async () => {
    const a = await first.tryTake(7);
    const b = await second.tryTake(7);
    expect(a).toBeDefined();
    expect(b).toBeDefined();
    expect(await first.tryTake(7)).toBeUndefined();
    expect(await second.tryTake(7)).toBeUndefined();
    // Another tenant is not affected.
    const other = await second.tryTake(8);
    expect(other).toBeDefined();
    await (a as SlotLease).release();
    await (a as SlotLease).release(); // twice is once
    const c = await second.tryTake(7);
    expect(c).toBeDefined();
    expect(await first.tryTake(7)).toBeUndefined();
    await Promise.all([b, c, other].map((lease) => (lease as SlotLease).release()));
  });

  it('frees the slot of a process that died while delivering once its lease runs out', async () => {
    const shortLeases = new RedisCallbackSlots(redisUrl, prefix, 1, 300, silent);
    try {
      expect(await shortLeases.tryTake(9)).toBeDefined(); // never released: its process "died"
      expect(await shortLeases.tryTake(9)).toBeUndefined();
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await shortLeases.tryTake(9)).toBeDefined();
    } finally {
      await shortLeases.close();
    }
  });

  it("falls back to the process's own slots when Redis does not answer", async () => {
    const unreachable = new RedisCallbackSlots('redis://127.0.0.1:1/0', prefix, 1, 60_000, silent);
    try {
      const lease = await unreachable.tryTake(10);
      expect(lease).toBeDefined();
      expect(await unreachable.tryTake(10)).toBeUndefined();
      await (lease as SlotLease).release();
      expect(await unreachable.tryTake(10)).toBeDefined();
    } finally {
      await unreachable.close();
    }
  });
});

/** A receiver that answers after `delayMs`, recording the most callbacks it ever had in flight at once. */
class SlowReceiver {
  inFlight = 0;
  mostInFlight = 0;
  received = 0;
  private server?: http.Server;
  constructor(private readonly delayMs: number) {}
  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.inFlight += 1;
      this.mostInFlight = Math.max(this.mostInFlight, this.inFlight);
      req.resume();
      req.on('end', () =>
        setTimeout(() => {
          this.inFlight -= 1;
          this.received += 1;
          res.writeHead(200).end('{}');
        }, this.delayMs),
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }
  url(path: string): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}${path}`;
  }
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

describe('two worker processes', () => {
  let api: TestApp;
  let otherWorker: TestApp;
  let tenant: TestUser;
  const slow = new SlowReceiver(1200);

  beforeAll(async () => {
    isolateJobStore('callback-slots');
    process.env.CALLBACK_SLOTS_PER_TENANT = '2';
    // Each worker alone could deliver 2 at once: together 4 unless the cap is shared.
    process.env.WORKER_CALLBACK_CONCURRENCY = '2';
    const options = { configOverrides: { outboundAllowList: ['127.0.0.1'] } };
    api = await createTestApp(options);
    otherWorker = await createTestApp(options);
    await Promise.all([api.services.execution.startWorker(), otherWorker.services.execution.startWorker()]);
    tenant = await api.newUser({ prefix: 'slots' });
    await deployScenario(api.services.db, tenant.id, 'double', doublingScenario());
    await slow.start();
  }, 60_000);
  afterAll(async () => {
    delete process.env.CALLBACK_SLOTS_PER_TENANT;
    delete process.env.WORKER_CALLBACK_CONCURRENCY;
    await slow.stop();
    await Promise.all([api?.close(), otherWorker?.close()]);
  });

  it("keep a tenant's callbacks in flight within CALLBACK_SLOTS_PER_TENANT across both", async () => {
    const runs = 10;
    for (let run = 0; run < runs; run += 1) {
      const submitted = await request(api.app)
        .post('/api/scenario/code/scoreasync/double')
        .set('Score-Token', tenant.scoreToken)
        .set('X-SCE-CallbackUrl', slow.url(`/slot-${run}`))
        .send({ a: run });
      expect(submitted.status).toBe(202);
    }
    await waitFor(async () => (slow.received === runs ? true : undefined), 40_000, 50);
    expect(slow.mostInFlight).toBe(2);
  }, 60_000);
});
