import type { RunLane } from '../types.js';
import type { TenantHolds } from './tenant-holds.js';

/** What the scheduler needs to know of a queued item: how much run time it may still use. */
export interface Schedulable {
  budgetMs: number;
}

interface TenantQueue<T> {
  items: T[];
  head: number;
  ready: boolean;
  /** When the tenant was last served (or arrived): the least recently served eligible tenant goes next. */
  served: number;
}

export interface SchedulerSettings {
  /** Most items in one batch (one message to a host). */
  maxBatch: number;
  /** Items of one batch differ by at most this much in remaining budget (their crossing's time-out is shared). */
  budgetSpreadMs: number;
}

/**
 * Fair queueing of one lane's engine work across tenants. Each tenant has its own FIFO queue; a free host takes
 * a batch from the tenant served least recently among those with work that may take another host (TenantHolds:
 * one cap per tenant, shared by every lane's scheduler; a tenant arriving counts as served when it arrives, so
 * coming back never jumps the queue). So a tenant whose runs loop until their time limit holds at most that many
 * hosts, and every other tenant is served by the next host that frees up, however much the first one has queued.
 */
export class TenantScheduler<T extends Schedulable> {
  private readonly tenants = new Map<number, TenantQueue<T>>();
  /** Tenants with queued items, in the order they get served. */
  private readonly ready: number[] = [];
  private queued = 0;
  private clock = 0;

  constructor(
    private readonly settings: SchedulerSettings,
    private readonly holds: TenantHolds,
    private readonly lane: RunLane = 'live',
  ) {}

  get pending(): number {
    return this.queued;
  }

  enqueue(owner: number, item: T): void {
    const tenant = this.tenant(owner);
    tenant.items.push(item);
    this.queued++;
    this.markReady(owner, tenant);
  }

  /**
   * Puts items back at the front of their tenant's queue (work a lost host did not finish, or that waited behind
   * an item that hit a limit). `behindOthers`: the tenant counts as served just now, so every other tenant waiting
   * goes first.
   */
  requeue(owner: number, items: T[], behindOthers = false): void {
    if (items.length === 0) return;
    const tenant = this.tenant(owner);
    tenant.items = [...items, ...tenant.items.slice(tenant.head)];
    tenant.head = 0;
    this.queued += items.length;
    if (behindOthers) tenant.served = ++this.clock;
    this.markReady(owner, tenant);
  }

  /** Items `owner` has queued in this lane. */
  queuedOf(owner: number): number {
    const tenant = this.tenants.get(owner);
    return tenant ? tenant.items.length - tenant.head : 0;
  }

  /**
   * The next batch for a free host, or null when no tenant with work may take another host. `eligible` narrows
   * the tenants this host may serve (a quarantine host, or any other); `sizeFor` caps the batch below maxBatch
   * (the pool spreads a tenant's queue over the messages it may have in flight).
   */
  take(
    eligible?: (owner: number) => boolean,
    sizeFor?: (owner: number, queued: number) => number,
  ): { owner: number; items: T[] } | null {
    let pick = -1;
    let pickServed = Infinity;
    for (let k = 0; k < this.ready.length; k++) {
      const owner = this.ready[k];
      const tenant = this.tenants.get(owner)!;
      if (tenant.served < pickServed && this.holds.mayTake(owner, this.lane) && (!eligible || eligible(owner))) {
        pick = k;
        pickServed = tenant.served;
      }
    }
    if (pick < 0) return null;
    const owner = this.ready[pick];
    const tenant = this.tenants.get(owner)!;
    this.ready.splice(pick, 1);
    tenant.ready = false;
    tenant.served = ++this.clock;
    const items = this.batchOf(tenant, sizeFor?.(owner, tenant.items.length - tenant.head));
    this.holds.take(owner, this.lane);
    if (tenant.head < tenant.items.length) this.markReady(owner, tenant);
    return { owner, items };
  }

  /** The next batch of `owner` (at most `size` items) for a host it already holds (no new host is taken), or null. */
  takeMore(owner: number, size?: number): T[] | null {
    const tenant = this.tenants.get(owner);
    if (!tenant || tenant.head >= tenant.items.length) return null;
    const items = this.batchOf(tenant, size);
    if (tenant.head >= tenant.items.length && tenant.ready) {
      this.ready.splice(this.ready.indexOf(owner), 1);
      tenant.ready = false;
    }
    return items;
  }

  /** Whether a tenant other than `owner` has work and may take a host. */
  othersWaiting(owner: number): boolean {
    for (const other of this.ready) {
      if (other !== owner && this.holds.mayTake(other, this.lane)) return true;
    }
    return false;
  }

  /** Forgets `owner` once it holds no host and has nothing queued here (its `served` mark goes with it). */
  prune(owner: number): void {
    const tenant = this.tenants.get(owner);
    if (tenant && this.holds.count(owner) === 0 && tenant.head >= tenant.items.length) this.tenants.delete(owner);
  }

  /** Every queued item, removed (the pool is closing). */
  drain(): T[] {
    const all: T[] = [];
    for (const tenant of this.tenants.values()) all.push(...tenant.items.slice(tenant.head));
    this.tenants.clear();
    this.ready.length = 0;
    this.queued = 0;
    return all;
  }

  private tenant(owner: number): TenantQueue<T> {
    let tenant = this.tenants.get(owner);
    if (!tenant) {
      // arriving counts as served just before the latest service: after every tenant waiting longer, before the one just served
      tenant = { items: [], head: 0, ready: false, served: this.clock - 0.5 };
      this.tenants.set(owner, tenant);
    }
    return tenant;
  }

  private markReady(owner: number, tenant: TenantQueue<T>): void {
    if (tenant.ready) return;
    tenant.ready = true;
    this.ready.push(owner);
  }

  private batchOf(tenant: TenantQueue<T>, size?: number): T[] {
    const { budgetSpreadMs } = this.settings;
    const maxBatch = Math.max(1, Math.min(this.settings.maxBatch, size ?? Infinity));
    const first = tenant.items[tenant.head];
    let end = tenant.head + 1;
    while (
      end < tenant.items.length &&
      end - tenant.head < maxBatch &&
      Math.abs(tenant.items[end].budgetMs - first.budgetMs) <= budgetSpreadMs
    )
      end++;
    const items = tenant.items.slice(tenant.head, end);
    this.queued -= items.length;
    if (end >= tenant.items.length) {
      tenant.items = [];
      tenant.head = 0;
    } else {
      tenant.head = end;
      // drop the consumed prefix now and then, so a long-lived queue does not grow without bound
      if (tenant.head > 1024) {
        tenant.items = tenant.items.slice(tenant.head);
        tenant.head = 0;
      }
    }
    return items;
  }
}
