import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import { BOOTSTRAP_SOURCE } from '../sandbox/bootstrap-source.js';
import type { RunLane } from '../types.js';
import { TenantScheduler } from './tenant-scheduler.js';

export interface EnginePoolSettings {
  /** Worker threads (each owns the isolates of the tenants it served lately). */
  workers: number;
  /** Most workers one tenant may hold at once. */
  workersPerTenant: number;
  /** Tenant isolates kept per worker (least recently used ones are disposed). */
  isolatesPerWorker: number;
  /** Memory limit of each tenant isolate. */
  memoryMb: number;
  /** Most items per message to a worker. */
  maxBatch: number;
  /** A crossing starts new items only during its first windowMs, so batched items keep (almost) their whole limit. */
  windowMs: number;
  /** How long past its time-out a crossing may run before its worker is given up and replaced. */
  stuckGraceMs: number;
  /**
   * How long a worker keeps looking for its next message after answering, before it sleeps, and how long the
   * caller waits for the answer to a lone run on an otherwise idle pool before returning to its event loop
   * (0: neither).
   */
  spinMicros: number;
}

export const DEFAULT_POOL_SETTINGS: Omit<EnginePoolSettings, 'workers' | 'workersPerTenant' | 'memoryMb'> = {
  isolatesPerWorker: 32,
  maxBatch: 128,
  windowMs: 10,
  stuckGraceMs: 40,
  spinMicros: 50,
};

/** A compiled program as the workers know it: its id and the source that instantiates it. */
export interface PoolProgram { readonly id: number; readonly source: string }

export type LimitCode = 'TIME_LIMIT_EXCEEDED' | 'MEMORY_LIMIT_EXCEEDED' | 'SCRIPT_ERROR';

/** The lanes, first served first (RunLane, src/engine/types.ts). */
const LANES: readonly RunLane[] = ['live', 'bulk', 'background'];

/** How one item ended: its output (parsed JSON) and the run time it used, or a failure of the item as a whole. */
export type ItemOutcome =
  | { ok: true; output: unknown; ms: number }
  | { ok: false; code: LimitCode; message: string; node: number };

interface Pending {
  owner: number;
  program: PoolProgram | null;
  item: string;
  budgetMs: number;
  resolve: (outcome: ItemOutcome) => void;
}

interface InFlight {
  seq: number; owner: number; lane: RunLane; items: Pending[]; answered: boolean[];
  /** A lone run's dispatch time, when its answer is measured in onMessage rather than awaited. */
  loneSince?: number;
}

interface Slot {
  index: number;
  worker: Worker;
  /** Where the worker answers: listened to, and polled while a lone run's answer is awaited. */
  answers: MessagePort;
  /** Programs whose source this worker has. */
  sent: Set<number>;
  /** Messages sent and not finished, in the order the worker runs them; all of one tenant. */
  flights: InFlight[];
  progress: Int32Array;
  watch: Float64Array;
  /** Tenants whose warm worker this is. */
  tenants: number;
}

export interface PoolStats { messages: number; crossings: number; items: number; crossingMs: number; replacedWorkers: number }

const WORKER_URL = new URL('./engine-worker.mjs', import.meta.url);
const WATCHDOG_EVERY_MS = 20;
/** Messages a worker may hold at once: the next batch waits in its port, so caller and worker overlap. */
const PIPELINE_DEPTH = 2;

/**
 * Runs sandbox items (steps of scenario runs, test expressions) on worker threads, never on the caller's
 * event loop. Items queue per lane (RunLane: live, then bulk, then background) and per tenant (TenantScheduler):
 * a free worker takes from the first lane that has work it may take, and gets a batch of one tenant's items
 * of that lane as one message and runs them in as few sandbox crossings as it can. While it runs, the tenant's next batch may
 * wait in the same worker's port (never another tenant's, and only when no other tenant is waiting), so the
 * caller prepares and reads batches while the worker runs them. A watchdog replaces a worker whose crossing
 * overruns its time-out (a sandbox that cannot be interrupted, e.g. while collecting garbage at its memory
 * limit), failing only the item that was running.
 */
export class EnginePool {
  /** One scheduler per lane. */
  private readonly lanes: Record<RunLane, TenantScheduler<Pending>>;
  /** Workers holding background work now, and the most that may (all but one, so other work always finds one). */
  private backgroundHeld = 0;
  private readonly maxBackgroundWorkers: number;
  private readonly slots: Slot[] = [];
  /** Workers with no message. */
  private readonly idle: Slot[] = [];
  /** The worker that last ran a tenant (its isolate is warm there). */
  private readonly affinity = new Map<number, Slot>();
  private seq = 0;
  /** How long lone runs took lately (µs, moving average): the caller waits for one only if that is short. */
  private loneRoundTrip = 0;
  private pumpQueued = false;
  private closed = false;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly counters: PoolStats = { messages: 0, crossings: 0, items: 0, crossingMs: 0, replacedWorkers: 0 };

  constructor(private readonly settings: EnginePoolSettings) {
    const scheduling = {
      workersPerTenant: Math.max(1, settings.workersPerTenant),
      maxBatch: Math.max(1, settings.maxBatch),
      budgetSpreadMs: settings.windowMs,
    };
    this.lanes = { live: new TenantScheduler(scheduling), bulk: new TenantScheduler(scheduling), background: new TenantScheduler(scheduling) };
    this.maxBackgroundWorkers = Math.max(1, settings.workers - 1);
    for (let k = 0; k < Math.max(1, settings.workers); k++) {
      const slot = this.spawn(k);
      this.slots.push(slot);
      this.idle.push(slot);
    }
  }

  /** Queues one item (`item` is its JSON text without brackets) for `owner` in `lane`; resolves when a worker ran it. */
  submit(owner: number, program: PoolProgram | null, item: string, budgetMs: number, lane: RunLane = 'live'): Promise<ItemOutcome> {
    if (this.closed) return Promise.resolve({ ok: false, code: 'SCRIPT_ERROR', message: 'The engine is shut down', node: -1 });
    return new Promise((resolve) => {
      this.lanes[lane].enqueue(owner, { owner, program, item, budgetMs, resolve });
      if (!this.pumpQueued) {
        // items submitted in the same tick leave together
        this.pumpQueued = true;
        queueMicrotask(() => { this.pumpQueued = false; this.pump(); });
      }
    });
  }

  /** The workers drop a program (its compilation left the host's cache). */
  forget(ids: number[]): void {
    if (ids.length === 0 || this.closed) return;
    for (const slot of this.slots) {
      const known = ids.filter((id) => slot.sent.delete(id));
      if (known.length > 0) slot.worker.postMessage({ t: 'forget', pids: known });
    }
  }

  stats(): PoolStats {
    return { ...this.counters };
  }

  /** Items waiting for a worker, by lane. */
  queued(): Record<RunLane, number> {
    return { live: this.lanes.live.pending, bulk: this.lanes.bulk.pending, background: this.lanes.background.pending };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    for (const pending of LANES.flatMap((lane) => this.lanes[lane].drain())) pending.resolve({ ok: false, code: 'SCRIPT_ERROR', message: 'The engine is shut down', node: -1 });
    for (const slot of this.slots) {
      this.abandon(slot, 'The engine is shut down');
      slot.answers.close();
    }
    this.idle.length = 0;
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }

  private spawn(index: number): Slot {
    const progressBuffer = new SharedArrayBuffer(8);
    const watchBuffer = new SharedArrayBuffer(16);
    const channel = new MessageChannel();
    const worker = new Worker(WORKER_URL, {
      // plain JavaScript: no loader of the parent (tsx, jest) is needed, so none is inherited
      execArgv: [],
      workerData: {
        bootstrapSource: BOOTSTRAP_SOURCE,
        memoryMb: this.settings.memoryMb,
        maxIsolates: Math.max(1, this.settings.isolatesPerWorker),
        windowMs: this.settings.windowMs,
        spinMicros: this.settings.spinMicros,
        progressBuffer,
        watchBuffer,
        answers: channel.port2,
      },
      transferList: [channel.port2],
    });
    // an idle pool never keeps the process alive; a busy worker does (see dispatch)
    worker.unref();
    const slot: Slot = { index, worker, answers: channel.port1, sent: new Set(), flights: [], progress: new Int32Array(progressBuffer), watch: new Float64Array(watchBuffer), tenants: 0 };
    channel.port1.on('message', (msg: WorkerMessage) => this.onMessage(slot, msg));
    // the worker's own handle keeps the process alive while it is busy
    channel.port1.unref();
    worker.on('error', (error) => this.replace(slot, `The engine worker failed: ${error.message}`));
    worker.on('exit', () => { if (!this.closed && this.slots[slot.index] === slot) this.replace(slot, 'The engine worker stopped'); });
    return slot;
  }

  private pump(): void {
    while (this.idle.length > 0 && this.pending() > 0) {
      const next = this.take();
      if (!next) break;
      if (next.lane === 'background') this.backgroundHeld++;
      this.dispatch(this.pickWorker(next.owner), next.owner, next.lane, next.items);
    }
    // a worker busy with a tenant gets that tenant's next batch of the same lane in advance, unless another
    // tenant could use a worker, or an earlier lane has work waiting
    for (const slot of this.slots) {
      if (this.pending() === 0) return;
      if (slot.flights.length === 0 || slot.flights.length >= PIPELINE_DEPTH) continue;
      const { owner, lane } = slot.flights[0];
      if (this.earlierLaneWaiting(lane)) continue;
      const scheduler = this.lanes[lane];
      if (scheduler.othersWaiting(owner)) continue;
      const items = scheduler.takeMore(owner);
      if (items) this.dispatch(slot, owner, lane, items);
    }
  }

  /** A batch for a free worker from the first lane with work it may take (background work never on the last free-of-it worker). */
  private take(): { lane: RunLane; owner: number; items: Pending[] } | null {
    for (const lane of LANES) {
      if (lane === 'background' && this.backgroundHeld >= this.maxBackgroundWorkers) continue;
      const batch = this.lanes[lane].take();
      if (batch) return { lane, ...batch };
    }
    return null;
  }

  /** Whether a lane served before `lane` has work queued. */
  private earlierLaneWaiting(lane: RunLane): boolean {
    for (const earlier of LANES) {
      if (earlier === lane) return false;
      if (this.lanes[earlier].pending > 0) return true;
    }
    return false;
  }

  private pending(): number {
    return this.lanes.live.pending + this.lanes.bulk.pending + this.lanes.background.pending;
  }

  /**
   * The tenant's warm worker when it is free (its isolate and programs are loaded there); else the free worker
   * fewest tenants call home, so tenants spread over the workers instead of evicting each other's sandboxes.
   */
  private pickWorker(owner: number): Slot {
    const warm = this.affinity.get(owner);
    let at = warm ? this.idle.indexOf(warm) : -1;
    if (at < 0) {
      at = 0;
      for (let k = 1; k < this.idle.length; k++) if (this.idle[k].tenants < this.idle[at].tenants) at = k;
    }
    const slot = this.idle.splice(at, 1)[0];
    if (warm !== slot) {
      if (warm) warm.tenants--;
      slot.tenants++;
      this.affinity.delete(owner);
      if (this.affinity.size >= 10_000) {
        const [oldest, home] = this.affinity.entries().next().value as [number, Slot];
        this.affinity.delete(oldest);
        home.tenants--;
      }
    }
    this.affinity.set(owner, slot);
    return slot;
  }

  private dispatch(slot: Slot, owner: number, lane: RunLane, items: Pending[]): void {
    const seq = ++this.seq;
    const sources: [number, string][] = [];
    const pids: number[] = new Array(items.length);
    const texts: string[] = new Array(items.length);
    const budgets: number[] = new Array(items.length);
    for (let k = 0; k < items.length; k++) {
      const { program, item, budgetMs } = items[k];
      pids[k] = program ? program.id : -1;
      texts[k] = item;
      budgets[k] = budgetMs;
      if (program && !slot.sent.has(program.id)) {
        slot.sent.add(program.id);
        sources.push([program.id, program.source]);
      }
    }
    slot.flights.push({ seq, owner, lane, items, answered: new Array(items.length).fill(false) });
    slot.worker.ref();
    this.counters.messages++;
    slot.worker.postMessage({ t: 'run', seq, owner, sources, pids, items: texts, budgets });
    this.startWatchdog();
    const lone = items.length === 1 && this.idle.length === this.slots.length - 1 && slot.flights.length === 1;
    if (!lone || this.settings.spinMicros <= 0) return;
    if (this.loneRoundTrip <= this.settings.spinMicros) this.awaitLone(slot, seq);
    else slot.flights[0].loneSince = performance.now();
  }

  /**
   * A lone run on an otherwise idle pool (a caller awaiting runs one at a time): poll for its answer for up to
   * spinMicros before going back to the event loop, which saves this thread a wake-up. The event loop waits
   * at most that long; the pool has nothing else to do meanwhile.
   */
  private awaitLone(slot: Slot, seq: number): void {
    const started = performance.now();
    const until = started + this.settings.spinMicros / 1000;
    for (;;) {
      const answer = receiveMessageOnPort(slot.answers);
      if (answer) {
        this.onMessage(slot, answer.message as WorkerMessage);
        if (slot.flights[0]?.seq !== seq) {
          this.noteLoneRoundTrip((performance.now() - started) * 1000);
          return;
        }
      } else if (performance.now() >= until) {
        // the answer will be measured when it comes (onMessage); a slow one stops the waiting for a while
        slot.flights[0].loneSince = started;
        return;
      }
    }
  }

  private noteLoneRoundTrip(micros: number): void {
    this.loneRoundTrip = this.loneRoundTrip * 0.8 + micros * 0.2;
  }

  private onMessage(slot: Slot, msg: WorkerMessage): void {
    const flight = slot.flights[0];
    if (!flight || msg.seq !== flight.seq) return;
    for (const out of msg.outs) this.resolveOutputs(flight, out);
    for (const failed of msg.fails) {
      if (flight.answered[failed.i]) continue;
      flight.answered[failed.i] = true;
      flight.items[failed.i].resolve({ ok: false, code: failed.code, message: failed.message, node: failed.node });
    }
    if (msg.done) {
      if (flight.loneSince !== undefined) this.noteLoneRoundTrip((performance.now() - flight.loneSince) * 1000);
      this.finish(slot, flight, 'The engine worker skipped this item');
      if (slot.flights.length === 0) this.idle.push(slot);
      this.pump();
    }
  }

  private resolveOutputs(flight: InFlight, out: CrossingOutput): void {
    const [outputs, millis] = JSON.parse(out.text) as [unknown[], number[]];
    let measured = 0;
    for (const ms of millis) measured += ms;
    // the crossing's own cost (copying, parsing) is shared by its items
    const overhead = Math.max(0, out.crossMs - measured) / outputs.length;
    this.counters.crossings++;
    this.counters.items += outputs.length;
    this.counters.crossingMs += out.crossMs;
    for (let k = 0; k < outputs.length; k++) {
      const i = out.idx[k];
      if (flight.answered[i]) continue;
      flight.answered[i] = true;
      flight.items[i].resolve({ ok: true, output: outputs[k], ms: millis[k] + overhead });
    }
  }

  /** Ends a message: unanswered items fail (`reason`); with the worker's last message, the tenant's hold on it ends. */
  private finish(slot: Slot, flight: InFlight, reason: string): void {
    slot.flights.splice(slot.flights.indexOf(flight), 1);
    flight.items.forEach((pending, i) => {
      if (!flight.answered[i]) pending.resolve({ ok: false, code: 'SCRIPT_ERROR', message: reason, node: -1 });
    });
    if (slot.flights.length === 0) {
      slot.worker.unref();
      this.lanes[flight.lane].release(flight.owner);
      if (flight.lane === 'background') this.backgroundHeld--;
    }
  }

  private abandon(slot: Slot, reason: string): void {
    for (const flight of [...slot.flights]) this.finish(slot, flight, reason);
  }

  /** Gives up a worker (crashed, or stuck past its crossing's time-out) and starts another in its place. */
  private replace(slot: Slot, reason: string, requeue?: { culprit: number; code: LimitCode }): void {
    if (this.closed || this.slots[slot.index] !== slot) return;
    if (requeue && slot.flights.length > 0) {
      // the running message: its culprit fails; everything else, including a message not yet started, runs again
      const again: Pending[] = [];
      slot.flights.forEach((flight, f) => flight.items.forEach((pending, i) => {
        if (flight.answered[i]) return;
        flight.answered[i] = true;
        if (f === 0 && (i === requeue.culprit || requeue.culprit < 0)) pending.resolve({ ok: false, code: requeue.code, message: reason, node: slot.progress[1] });
        else again.push(pending);
      }));
      this.lanes[slot.flights[0].lane].requeue(slot.flights[0].owner, again);
    }
    this.abandon(slot, reason);
    slot.answers.close();
    slot.worker.removeAllListeners('exit');
    void slot.worker.terminate();
    this.counters.replacedWorkers++;
    const fresh = this.spawn(slot.index);
    this.slots[slot.index] = fresh;
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
    this.idle.push(fresh);
    // its tenants' sandboxes are gone with it: they start afresh wherever they land next
    for (const [owner, warm] of this.affinity) if (warm === slot) this.affinity.delete(owner);
    this.pump();
  }

  private startWatchdog(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.checkStuck(), WATCHDOG_EVERY_MS);
    this.watchdog.unref();
  }

  private checkStuck(): void {
    const now = Date.now();
    let busy = false;
    for (const slot of [...this.slots]) {
      if (slot.flights.length === 0) continue;
      busy = true;
      const started = slot.watch[0];
      if (started > 0 && now - started > slot.watch[1] + this.settings.stuckGraceMs) {
        this.replace(slot, 'The run exceeded its CPU time limit', { culprit: slot.progress[0], code: 'TIME_LIMIT_EXCEEDED' });
      }
    }
    if (!busy && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = null;
    }
  }
}

/** Outputs of one crossing: items `idx` of the message, as "[[outputs…],[milliseconds…]]". */
interface CrossingOutput { idx: number[]; text: string; crossMs: number }

/** A worker's answer to a run message; `done` ends the message (usually its first and only answer). */
interface WorkerMessage {
  t: 'r';
  seq: number;
  outs: CrossingOutput[];
  fails: { i: number; code: LimitCode; message: string; node: number }[];
  done: boolean;
}
