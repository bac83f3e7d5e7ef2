import { describe, expect, it } from '@jest/globals';
import { TenantHolds } from '../../../src/engine/pool/tenant-holds.js';
import { TenantScheduler } from '../../../src/engine/pool/tenant-scheduler.js';

interface Item {
  budgetMs: number;
  name: string;
}
const item = (name: string, budgetMs = 1000): Item => ({ name, budgetMs });
const names = (batch: { items: Item[] } | null) => batch?.items.map((i) => i.name);
/** What the pool does when a host no longer holds any batch of `owner`. */
const release = (holds: TenantHolds, scheduler: TenantScheduler<Item>, owner: number) => {
  holds.release(owner);
  scheduler.prune(owner);
};

describe('TenantScheduler', () => {
  it('serves tenants in turn, whatever one of them has queued', () => {
    const holds = new TenantHolds(3);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 2, budgetSpreadMs: 10 }, holds);
    for (let k = 0; k < 6; k++) scheduler.enqueue(1, item(`a${k}`));
    scheduler.enqueue(2, item('b0'));
    expect(names(scheduler.take())).toEqual(['a0', 'a1']);
    expect(names(scheduler.take())).toEqual(['b0']);
    expect(names(scheduler.take())).toEqual(['a2', 'a3']);
    expect(scheduler.pending).toBe(2);
  });

  it('lets a tenant hold no more hosts than its cap, and more once one is released', () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('a0'));
    scheduler.enqueue(1, item('a1'));
    expect(names(scheduler.take())).toEqual(['a0']);
    expect(scheduler.take()).toBeNull();
    scheduler.enqueue(2, item('b0'));
    expect(names(scheduler.take())).toEqual(['b0']);
    release(holds, scheduler, 1);
    expect(names(scheduler.take())).toEqual(['a1']);
  });

  it("serves a tenant that arrives while another is being served before that one's next batch", () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('loop 1'));
    scheduler.enqueue(1, item('loop 2'));
    expect(names(scheduler.take())).toEqual(['loop 1']);
    scheduler.enqueue(2, item('b0'));
    release(holds, scheduler, 1);
    expect(names(scheduler.take())).toEqual(['b0']);
    expect(names(scheduler.take())).toEqual(['loop 2']);
  });

  it('lets a tenant coming back after its run serve after the tenants already waiting', () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('loop 1'));
    expect(names(scheduler.take())).toEqual(['loop 1']);
    scheduler.enqueue(2, item('b0'));
    scheduler.enqueue(3, item('c0'));
    expect(names(scheduler.take())).toEqual(['b0']);
    release(holds, scheduler, 1);
    scheduler.enqueue(1, item('loop 2'));
    expect(names(scheduler.take())).toEqual(['c0']);
    expect(names(scheduler.take())).toEqual(['loop 2']);
  });

  it('batches only items whose remaining budgets are close, since they share one time-out', () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 10, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('fresh', 1000));
    scheduler.enqueue(1, item('fresh too', 995));
    scheduler.enqueue(1, item('resumed', 400));
    expect(names(scheduler.take())).toEqual(['fresh', 'fresh too']);
    release(holds, scheduler, 1);
    expect(names(scheduler.take())).toEqual(['resumed']);
  });

  it("hands a busy tenant's next batch to its own host only while no other tenant could use a host", () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('a0'));
    scheduler.enqueue(1, item('a1'));
    expect(names(scheduler.take())).toEqual(['a0']);
    expect(scheduler.othersWaiting(1)).toBe(false);
    expect(scheduler.takeMore(1)?.map((i) => i.name)).toEqual(['a1']);
    expect(scheduler.takeMore(1)).toBeNull();
    scheduler.enqueue(2, item('b0'));
    expect(scheduler.othersWaiting(1)).toBe(true);
    expect(scheduler.othersWaiting(2)).toBe(false);
  });

  it('puts work a lost host did not finish back at the front of its queue', () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 5, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('a0'));
    scheduler.enqueue(1, item('a1'));
    const first = scheduler.take();
    scheduler.enqueue(1, item('a2'));
    release(holds, scheduler, 1);
    scheduler.requeue(1, first!.items.slice(1));
    expect(names(scheduler.take())).toEqual(['a1', 'a2']);
  });

  it('caps a tenant across lanes: the schedulers of every lane share one count of the hosts it holds', () => {
    const holds = new TenantHolds(1);
    const live = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds, 'live');
    const bulk = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds, 'bulk');
    live.enqueue(1, item('loop'));
    bulk.enqueue(1, item('batch loop'));
    bulk.enqueue(2, item('b0'));
    expect(names(live.take())).toEqual(['loop']);
    // tenant 1 holds its one host through the live lane: the bulk lane serves tenant 2 only
    expect(names(bulk.take())).toEqual(['b0']);
    expect(bulk.take()).toBeNull();
    holds.release(1, 'live');
    expect(names(bulk.take())).toEqual(['batch loop']);
  });

  it("keeps one of a tenant's hosts for its live work: deferred lanes hold at most all but one", () => {
    const holds = new TenantHolds(2);
    const live = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds, 'live');
    const bulk = new TenantScheduler<Item>({ maxBatch: 1, budgetSpreadMs: 10 }, holds, 'bulk');
    for (let k = 0; k < 3; k++) bulk.enqueue(1, item(`batch loop ${k}`));
    expect(names(bulk.take())).toEqual(['batch loop 0']);
    expect(bulk.take()).toBeNull();
    live.enqueue(1, item('score'));
    expect(names(live.take())).toEqual(['score']);
    expect(live.take()).toBeNull();
  });

  it('queues items sent back after a limit behind the tenants already waiting', () => {
    const holds = new TenantHolds(1);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 5, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('loop 1'));
    scheduler.enqueue(1, item('loop 2'));
    const first = scheduler.take();
    scheduler.enqueue(2, item('b0'));
    release(holds, scheduler, 1);
    // loop 1 hit its time limit; loop 2 never started and comes back, behind tenant 2
    scheduler.requeue(1, first!.items.slice(1), true);
    expect(names(scheduler.take())).toEqual(['b0']);
    expect(names(scheduler.take())).toEqual(['loop 2']);
  });

  it('takes only from tenants a host may serve (the quarantine host, or the others)', () => {
    const holds = new TenantHolds(2);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 5, budgetSpreadMs: 10 }, holds);
    scheduler.enqueue(1, item('a0'));
    scheduler.enqueue(2, item('b0'));
    expect(names(scheduler.take((owner) => owner !== 1))).toEqual(['b0']);
    expect(scheduler.take((owner) => owner !== 1)).toBeNull();
    expect(names(scheduler.take((owner) => owner === 1))).toEqual(['a0']);
  });

  it('caps a batch at the size the pool asks for, never above maxBatch', () => {
    const holds = new TenantHolds(2);
    const scheduler = new TenantScheduler<Item>({ maxBatch: 4, budgetSpreadMs: 10 }, holds);
    for (let k = 0; k < 10; k++) scheduler.enqueue(1, item(`a${k}`));
    const asked: number[] = [];
    const first = scheduler.take(undefined, (owner, queued) => {
      asked.push(owner, queued);
      return 3;
    });
    expect(asked).toEqual([1, 10]);
    expect(names(first)).toEqual(['a0', 'a1', 'a2']);
    expect(scheduler.queuedOf(1)).toBe(7);
    expect(scheduler.takeMore(1, 2)).toEqual([item('a3'), item('a4')]);
    expect(scheduler.takeMore(1, 100)?.map((i) => i.name)).toEqual(['a5', 'a6', 'a7', 'a8']);
    expect(scheduler.takeMore(1)?.map((i) => i.name)).toEqual(['a9']);
    expect(scheduler.queuedOf(1)).toBe(0);
  });
});
