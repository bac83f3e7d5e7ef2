import { describe, expect, it } from '@jest/globals';
import { TenantScheduler } from '../../../src/engine/pool/tenant-scheduler.js';

interface Item { budgetMs: number; name: string }
const item = (name: string, budgetMs = 1000): Item => ({ name, budgetMs });
const names = (batch: { items: Item[] } | null) => batch?.items.map((i) => i.name);

describe('TenantScheduler', () => {
  it('serves tenants in turn, whatever one of them has queued', () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 3, maxBatch: 2, budgetSpreadMs: 10 });
    for (let k = 0; k < 6; k++) scheduler.enqueue(1, item(`a${k}`));
    scheduler.enqueue(2, item('b0'));
    expect(names(scheduler.take())).toEqual(['a0', 'a1']);
    expect(names(scheduler.take())).toEqual(['b0']);
    expect(names(scheduler.take())).toEqual(['a2', 'a3']);
    expect(scheduler.pending).toBe(2);
  });

  it('lets a tenant hold no more workers than its cap, and more once one is released', () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 1, maxBatch: 1, budgetSpreadMs: 10 });
    scheduler.enqueue(1, item('a0'));
    scheduler.enqueue(1, item('a1'));
    expect(names(scheduler.take())).toEqual(['a0']);
    expect(scheduler.take()).toBeNull();
    scheduler.enqueue(2, item('b0'));
    expect(names(scheduler.take())).toEqual(['b0']);
    scheduler.release(1);
    expect(names(scheduler.take())).toEqual(['a1']);
  });

  it("serves a tenant that arrives while another is being served before that one's next batch", () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 1, maxBatch: 1, budgetSpreadMs: 10 });
    scheduler.enqueue(1, item('loop 1'));
    scheduler.enqueue(1, item('loop 2'));
    expect(names(scheduler.take())).toEqual(['loop 1']);
    scheduler.enqueue(2, item('b0'));
    scheduler.release(1);
    expect(names(scheduler.take())).toEqual(['b0']);
    expect(names(scheduler.take())).toEqual(['loop 2']);
  });

  it('lets a tenant coming back after its run serve after the tenants already waiting', () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 1, maxBatch: 1, budgetSpreadMs: 10 });
    scheduler.enqueue(1, item('loop 1'));
    expect(names(scheduler.take())).toEqual(['loop 1']);
    scheduler.enqueue(2, item('b0'));
    scheduler.enqueue(3, item('c0'));
    expect(names(scheduler.take())).toEqual(['b0']);
    scheduler.release(1);
    scheduler.enqueue(1, item('loop 2'));
    expect(names(scheduler.take())).toEqual(['c0']);
    expect(names(scheduler.take())).toEqual(['loop 2']);
  });

  it('batches only items whose remaining budgets are close, since they share one time-out', () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 1, maxBatch: 10, budgetSpreadMs: 10 });
    scheduler.enqueue(1, item('fresh', 1000));
    scheduler.enqueue(1, item('fresh too', 995));
    scheduler.enqueue(1, item('resumed', 400));
    expect(names(scheduler.take())).toEqual(['fresh', 'fresh too']);
    scheduler.release(1);
    expect(names(scheduler.take())).toEqual(['resumed']);
  });

  it("hands a busy tenant's next batch to its own worker only while no other tenant could use a worker", () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 1, maxBatch: 1, budgetSpreadMs: 10 });
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

  it('puts work a lost worker did not finish back at the front of its queue', () => {
    const scheduler = new TenantScheduler<Item>({ workersPerTenant: 1, maxBatch: 5, budgetSpreadMs: 10 });
    scheduler.enqueue(1, item('a0'));
    scheduler.enqueue(1, item('a1'));
    const first = scheduler.take();
    scheduler.enqueue(1, item('a2'));
    scheduler.release(1);
    scheduler.requeue(1, first!.items.slice(1));
    expect(names(scheduler.take())).toEqual(['a1', 'a2']);
  });
});
