import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { getPriority, setPriority, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { BOOTSTRAP_SOURCE } from '../sandbox/bootstrap-source.js';
import type { RunLane } from '../types.js';
import { CrashRecord } from './crash-record.js';
import { TenantHolds } from './tenant-holds.js';
import { TenantScheduler } from './tenant-scheduler.js';

export interface EnginePoolSettings {
  /** Engine host processes (each runs one message at a time and owns the isolates of the tenants it served lately). */
  hosts: number;
  /** Most hosts one tenant may hold at once, across every lane. */
  hostsPerTenant: number;
  /** Tenant isolates kept per host (least recently used ones are disposed). */
  isolatesPerHost: number;
  /** Memory limit of each tenant isolate. */
  memoryMb: number;
  /** A host whose resident memory passes this (MB) is replaced once it is idle (0: never). */
  hostMemoryMb: number;
  /** ONNX sessions a host keeps open: at most this many MB of model files (least recently used closed first). */
  onnxSessionsMb: number;
  /** Most items per message to a host. */
  maxBatch: number;
  /** A crossing starts new items only during its first windowMs, so batched items keep (almost) their whole limit. */
  windowMs: number;
  /**
   * How long a message may hold its host before the runs it has not started yet queue again behind other tenants'
   * work (checked between crossings: a message of fast runs ends in one crossing anyway).
   */
  sliceMs: number;
  /** How long past its time-out a crossing may run before its host is killed and replaced. */
  stuckGraceMs: number;
  /** Host deaths within `quarantineWindowMs` whose running message was a tenant's before that tenant is quarantined. */
  quarantineAfterCrashes: number;
  /** How far back crashes count, and how long a quarantine lasts. */
  quarantineWindowMs: number;
  /**
   * The hosts' scheduling priority (nice, 0–19): above the caller's, so tenant code that loops never takes the
   * cores from the event loop that answers requests, health checks included.
   */
  hostNice: number;
}

export const DEFAULT_POOL_SETTINGS: Omit<EnginePoolSettings, 'hosts' | 'hostsPerTenant' | 'memoryMb'> = {
  isolatesPerHost: 32,
  hostMemoryMb: 2048,
  onnxSessionsMb: 256,
  maxBatch: 128,
  windowMs: 10,
  sliceMs: 50,
  stuckGraceMs: 40,
  quarantineAfterCrashes: 2,
  quarantineWindowMs: 10 * 60_000,
  hostNice: 10,
};

/**
 * A compiled program as the hosts know it: its id, the source that instantiates it, and the ONNX files its MODEL
 * nodes call ([sha256, base64]; sent to a host with the source, dropped with it).
 */
export interface PoolProgram {
  readonly id: number;
  readonly source: string;
  readonly onnxModels?: [string, string][];
}

type LimitCode = 'TIME_LIMIT_EXCEEDED' | 'MEMORY_LIMIT_EXCEEDED' | 'SCRIPT_ERROR' | 'ENGINE_CRASHED';

/** The lanes, first served first (RunLane, src/engine/types.ts). */
const LANES: readonly RunLane[] = ['live', 'validation', 'bulk', 'background'];

/** How one item ended: its output (parsed JSON) and the run time it used, or a failure of the item as a whole. */
export type ItemOutcome =
  | { ok: true; output: unknown; ms: number }
  | { ok: false; code: LimitCode; message: string; node: number };

/** What the pool tells its owner (logs, metrics): hosts that died or were replaced, tenants quarantined. */
export type EngineEvent =
  | {
      kind: 'host-died';
      host: number;
      pid: number | undefined;
      exit: string;
      runsFailed: number;
      runsRequeued: number;
      owner: number | null;
      stderr: string;
    }
  | { kind: 'host-replaced'; host: number; reason: 'stuck' | 'memory' | 'unresponsive' }
  | { kind: 'tenant-quarantined'; owner: number; crashes: number; untilMs: number };

interface Pending {
  owner: number;
  program: PoolProgram | null;
  item: string;
  budgetMs: number;
  /** Host deaths this item waited in a host at (a message not started yet); at two it fails for good. */
  deaths: number;
  resolve: (outcome: ItemOutcome) => void;
}

interface InFlight {
  seq: number;
  owner: number;
  lane: RunLane;
  items: Pending[];
  answered: boolean[];
}

interface Slot {
  index: number;
  host: ChildProcess;
  /** Programs whose source this host has. */
  sent: Set<number>;
  /** Messages sent and not finished, in the order the host runs them; all of one tenant. */
  flights: InFlight[];
  /** Tenants whose warm host this is. */
  tenants: number;
  /** The last time the host answered, or was given work while idle (ms, performance.now()). */
  lastHeard: number;
  /** Asked to go (memory): takes no new work and is replaced once idle. */
  retiring: 'memory' | null;
  /** The watchdog's report, if it killed the host (see engine-host.mjs). */
  stuckReport: string;
  /** The end of what the host wrote to stderr (V8's fatal error on an abort), for the log. */
  stderr: string;
  /** Replaced on purpose: its exit is no crash. */
  discarded: boolean;
  /** Serves quarantined tenants only. */
  quarantine: boolean;
  /** When it was started, and whether it said it is ready: a host that dies before that is started again only after a pause. */
  spawnedAt: number;
  answeredOnce: boolean;
  /** Being killed by the parent as unresponsive. */
  killing: boolean;
  /** Where the host writes the seq of the message it starts (engine-host.mjs), read after its death. */
  startedFile: string;
}

export interface PoolStats {
  messages: number;
  crossings: number;
  items: number;
  crossingMs: number;
  /**
   * This process's own time for background messages (ms): building and sending them, taking in their answers; and
   * the items sent in them. The shadows' budget charges it (docs/adr/0028-shadow-costs-charged-in-full.md).
   */
  backgroundMs: number;
  backgroundItems: number;
  /** Hosts that died (aborted, killed from outside, or killed by their watchdog). */
  hostDeaths: number;
  /** Hosts replaced for any reason, deaths included. */
  replacedHosts: number;
  /** Items failed with ENGINE_CRASHED. */
  crashedItems: number;
  /** Items run again on another host after a death. */
  requeuedItems: number;
  /** Tenants quarantined now. */
  quarantinedTenants: number;
}

const HOST_URL = new URL('./engine-host.mjs', import.meta.url);
const WATCHDOG_EVERY_MS = 250;
/** A busy host that says nothing for this long past its message's time-out is killed (its watchdog should have). */
const UNRESPONSIVE_MS = 30_000;
/** Messages a host may hold at once: the next batch waits in its channel, so caller and host overlap. */
const PIPELINE_DEPTH = 2;
/**
 * A tenant's queue is split into messages of at least this many items (when it holds twice as many): below it, a
 * message's own cost (tens of µs on each side of the channel) outweighs what overlapping caller and host gains.
 */
const MIN_SPLIT_BATCH = 16;
/**
 * Items of a background message (shadow runs, replays), at most, while live runs are being served (one dispatched in
 * the last LIVE_RECENT_MS): a host busy with a background message is a host live runs wait for (one cap per tenant
 * across lanes), so it comes back after a few runs' time, not after 128. Without live traffic (a replay on a quiet
 * service) background messages are as large as any.
 */
const BACKGROUND_BATCH = 8;
const LIVE_RECENT_MS = 50;
const STDERR_TAIL = 2048;
/** Where hosts note the message they start: memory-backed where there is /dev/shm. */
const STARTED_FILES_DIR = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();
/** Host deaths an item may be in flight at, waiting in a host's channel, before it fails for good: it runs again once. */
const MAX_DEATHS_WAITING = 2;

/**
 * Runs sandbox items (steps of scenario runs, test expressions) in engine host processes (engine-host.mjs), never
 * in the caller's process: V8 may abort the process an isolate lives in (a Map grown past a few million entries),
 * and that must cost one host, not the API. Items queue per lane (RunLane: live, validation, bulk, background) and
 * per tenant (TenantScheduler), with one cap per tenant across lanes (TenantHolds). A free host takes from the
 * first lane that has work it may take, and gets a batch of one tenant's items of that lane as one message, which
 * it runs in as few sandbox crossings as it can. While it runs, the tenant's next batch may wait in the same
 * host's channel (never another tenant's, and only when no other tenant is waiting).
 *
 * When a host dies: the items of the message it was running (it noted its start in a file) fail with ENGINE_CRASHED;
 * they are all of one tenant, since a host runs one message at a time. Items of messages that merely waited in its
 * channel run again once on another host (one in flight at a second death fails too), and a new host takes its
 * place at once. A tenant whose messages
 * were running at `quarantineAfterCrashes` deaths within `quarantineWindowMs` is quarantined for that long: its
 * items run one per message on a host of their own, so it can only crash that one.
 */
export class EnginePool {
  private readonly holds: TenantHolds;
  private readonly lanes: Record<RunLane, TenantScheduler<Pending>>;
  /** Hosts holding background work now, and the most that may (all but one, so other work always finds one). */
  private backgroundHeld = 0;
  /** When a live message was last sent (performance.now()): background messages stay short for LIVE_RECENT_MS. */
  private liveDispatchedAt = -Infinity;
  private readonly maxBackgroundHosts: number;
  private readonly slots: Slot[] = [];
  /** Hosts with no message (the quarantine host is never here). */
  private readonly idle: Slot[] = [];
  /** The host quarantined tenants' items run on, started when first needed. */
  private quarantineSlot: Slot | null = null;
  private readonly crashes: CrashRecord;
  /**
   * The hosts that last ran each tenant, most recent first, as many as it may hold (its isolates are warm there);
   * tenants least recently given a new host first.
   */
  private readonly affinity = new Map<number, Slot[]>();
  private seq = 0;
  private pumpQueued = false;
  private closed = false;
  private watchdog: NodeJS.Timeout | null = null;
  private readonly counters = {
    messages: 0,
    crossings: 0,
    items: 0,
    crossingMs: 0,
    backgroundMs: 0,
    backgroundItems: 0,
    hostDeaths: 0,
    replacedHosts: 0,
    crashedItems: 0,
    requeuedItems: 0,
  };

  constructor(
    private readonly settings: EnginePoolSettings,
    private readonly onEvent: (event: EngineEvent) => void = () => {},
  ) {
    this.holds = new TenantHolds(Math.max(1, settings.hostsPerTenant));
    const scheduling = { maxBatch: Math.max(1, settings.maxBatch), budgetSpreadMs: settings.windowMs };
    this.lanes = {
      live: new TenantScheduler(scheduling, this.holds, 'live'),
      validation: new TenantScheduler(scheduling, this.holds, 'validation'),
      bulk: new TenantScheduler(scheduling, this.holds, 'bulk'),
      background: new TenantScheduler(scheduling, this.holds, 'background'),
    };
    this.crashes = new CrashRecord(settings.quarantineAfterCrashes, settings.quarantineWindowMs);
    removeStartedFilesOfGoneProcesses();
    this.maxBackgroundHosts = Math.max(1, settings.hosts - 1);
    for (let k = 0; k < Math.max(1, settings.hosts); k++) {
      const slot = this.spawn(k, false);
      this.slots.push(slot);
      this.idle.push(slot);
    }
  }

  /** Queues one item (`item` is its JSON text without brackets) for `owner` in `lane`; resolves when a host ran it. */
  submit(
    owner: number,
    program: PoolProgram | null,
    item: string,
    budgetMs: number,
    lane: RunLane = 'live',
  ): Promise<ItemOutcome> {
    if (this.closed)
      return Promise.resolve({ ok: false, code: 'SCRIPT_ERROR', message: 'The engine is shut down', node: -1 });
    return new Promise((resolve) => {
      this.lanes[lane].enqueue(owner, { owner, program, item, budgetMs, deaths: 0, resolve });
      this.schedulePump();
    });
  }

  /** The hosts drop a program (its compilation left the caller's cache). */
  forget(ids: number[]): void {
    if (ids.length === 0 || this.closed) return;
    for (const slot of this.allSlots()) {
      const known = ids.filter((id) => slot.sent.delete(id));
      if (known.length > 0) this.send(slot, { t: 'forget', pids: known });
    }
  }

  stats(): PoolStats {
    return { ...this.counters, quarantinedTenants: this.crashes.quarantinedCount() };
  }

  /** Items waiting for a host, by lane. */
  queued(): Record<RunLane, number> {
    return {
      live: this.lanes.live.pending,
      validation: this.lanes.validation.pending,
      bulk: this.lanes.bulk.pending,
      background: this.lanes.background.pending,
    };
  }

  /** @internal tests and benchmarks: the process ids of the hosts (the quarantine host last, when running). */
  hostPids(): number[] {
    return this.allSlots().map((slot) => slot.host.pid ?? -1);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.watchdog) clearInterval(this.watchdog);
    for (const pending of LANES.flatMap((lane) => this.lanes[lane].drain()))
      pending.resolve({ ok: false, code: 'SCRIPT_ERROR', message: 'The engine is shut down', node: -1 });
    const slots = this.allSlots();
    for (const slot of slots) this.abandon(slot, 'The engine is shut down');
    this.idle.length = 0;
    await Promise.all(slots.map((slot) => this.kill(slot)));
    for (const slot of slots) rmSync(slot.startedFile, { force: true });
  }

  private allSlots(): Slot[] {
    return this.quarantineSlot ? [...this.slots, this.quarantineSlot] : [...this.slots];
  }

  private spawn(index: number, quarantine: boolean): Slot {
    // fd 3: the IPC channel; fd 4: the host's watchdog reports the item it killed the host for (engine-host.mjs)
    const startedFile = join(STARTED_FILES_DIR, `scoring-engine-host-${process.pid}-${randomUUID()}`);
    writeFileSync(startedFile, Buffer.alloc(8));
    const host = fork(HOST_URL, [], {
      execArgv: [],
      serialization: 'json',
      stdio: ['ignore', 'inherit', 'pipe', 'ipc', 'pipe'],
    });
    if (host.pid !== undefined && this.settings.hostNice > 0) {
      try {
        setPriority(host.pid, Math.min(19, getPriority() + this.settings.hostNice));
      } catch {
        // a platform that refuses: the hosts run at the caller's priority
      }
    }
    const slot: Slot = {
      index,
      host,
      sent: new Set(),
      flights: [],
      tenants: 0,
      lastHeard: performance.now(),
      retiring: null,
      stuckReport: '',
      stderr: '',
      discarded: false,
      quarantine,
      spawnedAt: performance.now(),
      answeredOnce: false,
      killing: false,
      startedFile,
    };
    host.on('message', (msg: HostMessage) => this.onMessage(slot, msg));
    (host.stdio[4] as Readable).on('data', (chunk: Buffer) => {
      slot.stuckReport += chunk.toString('utf8');
    });
    host.stderr!.on('data', (chunk: Buffer) => {
      slot.stderr = (slot.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    host.on('error', () => {
      /* a failed spawn or send ends in 'close' below */
    });
    // 'close': the process has ended and its pipes are drained, so the watchdog's report (if any) has been read
    host.on('close', (code, signal) => this.onHostClosed(slot, signal ?? `exit code ${code}`));
    this.unrefHost(slot);
    this.send(slot, {
      t: 'init',
      bootstrapSource: BOOTSTRAP_SOURCE,
      memoryMb: this.settings.memoryMb,
      maxIsolates: Math.max(1, this.settings.isolatesPerHost),
      windowMs: this.settings.windowMs,
      sliceMs: this.settings.sliceMs,
      stuckGraceMs: this.settings.stuckGraceMs,
      retireRssMb: this.settings.hostMemoryMb,
      startedFile,
      onnxSessionsMb: this.settings.onnxSessionsMb,
    });
    return slot;
  }

  /** An idle pool never keeps the process alive; a busy host does (see dispatch). */
  private unrefHost(slot: Slot): void {
    slot.host.unref();
    slot.host.channel?.unref();
    for (const stream of [slot.host.stdio[2], slot.host.stdio[4]])
      (stream as unknown as { unref?: () => void } | null)?.unref?.();
  }

  private refHost(slot: Slot): void {
    slot.host.ref();
    slot.host.channel?.ref();
  }

  private send(slot: Slot, message: object): void {
    if (!slot.host.connected) return;
    try {
      slot.host.send(message);
    } catch {
      // the channel closed under us: 'close' follows and handles the host's work
    }
  }

  private schedulePump(): void {
    if (this.pumpQueued) return;
    // items submitted in the same tick leave together
    this.pumpQueued = true;
    queueMicrotask(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  private pump(): void {
    if (this.closed) return;
    this.pumpQuarantine();
    while (this.idle.length > 0 && this.pending() > 0) {
      const next = this.take(
        (owner) => !this.crashes.isQuarantined(owner),
        (owner, lane, queued) => this.batchSize(owner, lane, queued),
      );
      if (!next) break;
      if (next.lane === 'background') this.backgroundHeld++;
      this.dispatch(this.pickHost(next.owner), next.owner, next.lane, next.items);
    }
    // a host busy with a tenant gets that tenant's next batch of the same lane in advance, unless another
    // tenant could use a host, or an earlier lane has work waiting
    for (const slot of this.slots) {
      if (this.pending() === 0) return;
      if (slot.flights.length === 0 || slot.flights.length >= PIPELINE_DEPTH || slot.retiring) continue;
      const { owner, lane } = slot.flights[0];
      if (this.crashes.isQuarantined(owner) || this.earlierLaneWaiting(lane)) continue;
      const scheduler = this.lanes[lane];
      if (scheduler.othersWaiting(owner)) continue;
      const items = scheduler.takeMore(owner, this.batchSize(owner, lane, scheduler.queuedOf(owner)));
      if (items) this.dispatch(slot, owner, lane, items);
    }
  }

  /** Quarantined tenants' items, one at a time, on the quarantine host (started when first needed). */
  private pumpQuarantine(): void {
    if (this.crashes.quarantinedCount() === 0 || this.pending() === 0) return;
    if (this.quarantineSlot && this.quarantineSlot.flights.length > 0) return;
    const next = this.take((owner) => this.crashes.isQuarantined(owner));
    if (!next) return;
    this.quarantineSlot ??= this.spawn(-1, true);
    // one item per message: a crash there fails exactly the item that caused it; the rest go back in front
    const [first, ...rest] = next.items;
    this.lanes[next.lane].requeue(next.owner, rest);
    if (next.lane === 'background') this.backgroundHeld++;
    this.dispatch(this.quarantineSlot, next.owner, next.lane, [first]);
  }

  /** A batch for a free host from the first lane with work it may take (background work never on the last host free of it). */
  private take(
    eligible: (owner: number) => boolean,
    sizeFor?: (owner: number, lane: RunLane, queued: number) => number,
  ): { lane: RunLane; owner: number; items: Pending[] } | null {
    for (const lane of LANES) {
      if (lane === 'background' && this.backgroundHeld >= this.maxBackgroundHosts) continue;
      const batch = this.lanes[lane].take(eligible, sizeFor && ((owner, queued) => sizeFor(owner, lane, queued)));
      if (batch) return { lane, ...batch };
    }
    return null;
  }

  /**
   * How many of `owner`'s `queued` items of `lane` the next message takes: the queue spread evenly over the messages
   * the tenant may still put in flight in that lane (free hosts it may take, and room in the channels of the hosts
   * it holds for that lane, PIPELINE_DEPTH each). So 256 runs in flight on two hosts go as four messages of 64, and a
   * host always has the tenant's next message waiting while the caller builds the one after, instead of two messages
   * of 128 that leave each host idle while the caller answers and resubmits their runs. Never below MIN_SPLIT_BATCH
   * (fewer queued than twice that go as one message, as before), never above maxBatch (the scheduler's cap).
   */
  private batchSize(owner: number, lane: RunLane, queued: number): number {
    // While live runs are being served, a background message is short: its host is back for them within a few runs.
    if (lane === 'background' && performance.now() - this.liveDispatchedAt < LIVE_RECENT_MS)
      return Math.min(queued, BACKGROUND_BATCH);
    if (queued < 2 * MIN_SPLIT_BATCH) return queued;
    let room = Math.max(0, Math.min(this.holds.cap - this.holds.count(owner), this.idle.length)) * PIPELINE_DEPTH;
    for (const slot of this.slots) {
      const flights = slot.flights;
      if (flights.length > 0 && flights[0].owner === owner && flights[0].lane === lane && !slot.retiring)
        room += Math.max(0, PIPELINE_DEPTH - flights.length);
    }
    return Math.max(MIN_SPLIT_BATCH, Math.ceil(queued / Math.max(1, room)));
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
    return (
      this.lanes.live.pending + this.lanes.validation.pending + this.lanes.bulk.pending + this.lanes.background.pending
    );
  }

  /**
   * One of the tenant's warm hosts when one is free (its isolate and programs are loaded there, hot in the CPU's
   * caches); else the free host fewest tenants call home, so tenants spread over the hosts instead of evicting each
   * other's sandboxes. A tenant keeps as many warm hosts as it may hold at once: one that holds two hosts runs on
   * the same two, instead of turning over every host of the pool (which cost its runs a fifth more host CPU).
   */
  private pickHost(owner: number): Slot {
    let warm = this.affinity.get(owner);
    let at = -1;
    if (warm) for (let w = 0; w < warm.length && at < 0; w++) at = this.idle.indexOf(warm[w]);
    if (at < 0) {
      at = 0;
      for (let k = 1; k < this.idle.length; k++) if (this.idle[k].tenants < this.idle[at].tenants) at = k;
    }
    const slot = this.idle.splice(at, 1)[0];
    const known = warm ? warm.indexOf(slot) : -1;
    if (warm && known >= 0) {
      if (known > 0) warm.unshift(...warm.splice(known, 1));
      return slot;
    }
    slot.tenants++;
    if (warm) {
      this.affinity.delete(owner);
      if (warm.length >= this.holds.cap) warm.pop()!.tenants--;
      warm.unshift(slot);
    } else {
      warm = [slot];
      if (this.affinity.size >= 10_000) {
        const [oldest, homes] = this.affinity.entries().next().value as [number, Slot[]];
        this.affinity.delete(oldest);
        for (const home of homes) home.tenants--;
      }
    }
    this.affinity.set(owner, warm);
    return slot;
  }

  private dispatch(slot: Slot, owner: number, lane: RunLane, items: Pending[]): void {
    const started = lane === 'background' ? performance.now() : 0;
    if (lane === 'live') this.liveDispatchedAt = performance.now();
    const seq = ++this.seq;
    const sources: ([number, string] | [number, string, [string, string][]])[] = [];
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
        sources.push(
          program.onnxModels ? [program.id, program.source, program.onnxModels] : [program.id, program.source],
        );
      }
    }
    if (slot.flights.length === 0) {
      slot.lastHeard = performance.now();
      this.refHost(slot);
    }
    slot.flights.push({ seq, owner, lane, items, answered: new Array(items.length).fill(false) });
    this.counters.messages++;
    this.send(slot, { t: 'run', seq, owner, sources, pids, items: texts, budgets });
    this.startWatchdog();
    if (lane === 'background') {
      this.counters.backgroundMs += performance.now() - started;
      this.counters.backgroundItems += items.length;
    }
  }

  private onMessage(slot: Slot, msg: HostMessage): void {
    slot.lastHeard = performance.now();
    slot.answeredOnce = true;
    if (msg.t === 'ready') return;
    if (msg.t === 'retire') {
      slot.retiring ??= 'memory';
      if (slot.flights.length === 0) this.replace(slot, 'memory');
      return;
    }
    const flight = slot.flights[0];
    if (!flight || msg.seq !== flight.seq) return;
    const started = flight.lane === 'background' ? performance.now() : 0;
    for (const out of msg.outs) this.resolveOutputs(flight, out);
    for (const failed of msg.fails) {
      if (flight.answered[failed.i]) continue;
      flight.answered[failed.i] = true;
      flight.items[failed.i].resolve({ ok: false, code: failed.code, message: failed.message, node: failed.node });
    }
    if (msg.requeue.length > 0) {
      // an item hit a limit, or the message used up its slice: the tenant's items behind it queue again behind the
      // other tenants' work
      const again = msg.requeue
        .filter((i) => !flight.answered[i])
        .map((i) => {
          flight.answered[i] = true;
          return flight.items[i];
        });
      this.lanes[flight.lane].requeue(flight.owner, again, true);
    }
    if (started > 0) this.counters.backgroundMs += performance.now() - started;
    if (msg.done) {
      this.finish(slot, flight, 'The engine host skipped this item');
      if (slot.flights.length === 0) {
        if (slot.retiring) this.replace(slot, slot.retiring);
        else if (!slot.quarantine) this.idle.push(slot);
      }
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

  /** Ends a message: unanswered items fail (`reason`); with the host's last message, the tenant's hold on it ends. */
  private finish(slot: Slot, flight: InFlight, reason: string): void {
    slot.flights.splice(slot.flights.indexOf(flight), 1);
    flight.items.forEach((pending, i) => {
      if (!flight.answered[i]) pending.resolve({ ok: false, code: 'SCRIPT_ERROR', message: reason, node: -1 });
    });
    if (slot.flights.length === 0) {
      this.unrefHost(slot);
      this.holds.release(flight.owner, flight.lane);
      for (const lane of LANES) this.lanes[lane].prune(flight.owner);
      if (flight.lane === 'background') this.backgroundHeld--;
    }
  }

  private abandon(slot: Slot, reason: string): void {
    for (const flight of [...slot.flights]) this.finish(slot, flight, reason);
  }

  /** A host ended. Unless it was replaced on purpose, it died: settle its work and start another in its place. */
  private onHostClosed(slot: Slot, exit: string): void {
    if (slot.discarded || this.closed) {
      rmSync(slot.startedFile, { force: true });
      return;
    }
    this.counters.hostDeaths++;
    const report = parseStuckReport(slot.stuckReport);
    const running = slot.flights[0];
    const startedSeq = lastStarted(slot.startedFile);
    let failed = 0;
    let requeued = 0;
    slot.flights.forEach((flight, f) => {
      const again: Pending[] = [];
      flight.items.forEach((pending, i) => {
        if (flight.answered[i]) return;
        flight.answered[i] = true;
        if (f === 0 && report && report.seq === flight.seq) {
          // the watchdog named the item whose crossing overran: it alone fails; the others were not to blame
          if (i === report.culprit)
            pending.resolve({
              ok: false,
              code: 'TIME_LIMIT_EXCEEDED',
              message: 'The run exceeded its CPU time limit',
              node: report.node,
            });
          else again.push(pending);
          return;
        }
        // the message that was running: its code is the suspect (every item of it is one tenant's); messages that
        // had not started run again elsewhere, once: an item in flight at a second death fails for good
        if (flight.seq === startedSeq || ++pending.deaths >= MAX_DEATHS_WAITING) {
          failed++;
          pending.resolve({
            ok: false,
            code: 'ENGINE_CRASHED',
            message: crashMessage(this.settings.memoryMb),
            node: -1,
          });
        } else {
          again.push(pending);
        }
      });
      requeued += again.length;
      this.lanes[flight.lane].requeue(flight.owner, again);
    });
    this.counters.crashedItems += failed;
    this.counters.requeuedItems += requeued;
    const owner = running && running.seq === startedSeq && !report ? running.owner : null;
    rmSync(slot.startedFile, { force: true });
    this.onEvent({
      kind: 'host-died',
      host: slot.index,
      pid: slot.host.pid,
      exit,
      runsFailed: failed,
      runsRequeued: requeued,
      owner,
      stderr: slot.stderr.trim(),
    });
    if (owner !== null && this.crashes.crashed(owner)) {
      this.onEvent({
        kind: 'tenant-quarantined',
        owner,
        crashes: this.settings.quarantineAfterCrashes,
        untilMs: this.settings.quarantineWindowMs,
      });
    }
    this.respawn(slot);
  }

  /** Gives up a live host on purpose (memory, unresponsive), killing it; its unfinished work runs again elsewhere. */
  private replace(slot: Slot, reason: 'memory' | 'unresponsive'): void {
    if (this.closed || slot.discarded) return;
    if (reason === 'unresponsive') {
      if (slot.killing) return;
      slot.killing = true;
      // treated as a death: the running message fails, as if the host had died
      void this.kill(slot, false);
      this.onEvent({ kind: 'host-replaced', host: slot.index, reason });
      return;
    }
    slot.discarded = true;
    for (const flight of [...slot.flights]) {
      const again = flight.items.filter((_, i) => !flight.answered[i]);
      flight.answered.fill(true);
      this.lanes[flight.lane].requeue(flight.owner, again);
    }
    this.abandon(slot, 'The engine host was replaced');
    void this.kill(slot);
    this.onEvent({ kind: 'host-replaced', host: slot.index, reason });
    this.respawn(slot);
  }

  private respawn(slot: Slot): void {
    this.counters.replacedHosts++;
    slot.discarded = true;
    for (const flight of [...slot.flights]) this.finish(slot, flight, 'The engine host stopped');
    const at = this.idle.indexOf(slot);
    if (at >= 0) this.idle.splice(at, 1);
    // its tenants' sandboxes are gone with it: they start afresh wherever they land next
    for (const [owner, warm] of this.affinity) {
      const at = warm.indexOf(slot);
      if (at < 0) continue;
      warm.splice(at, 1);
      if (warm.length === 0) this.affinity.delete(owner);
    }
    if (slot.quarantine) {
      this.quarantineSlot = null;
      this.pump();
      return;
    }
    const start = () => {
      if (this.closed) return;
      const fresh = this.spawn(slot.index, false);
      this.slots[slot.index] = fresh;
      this.idle.push(fresh);
      this.pump();
    };
    // a host that died before it was ready (it cannot start) is started again after a pause, not in a tight loop
    if (!slot.answeredOnce && performance.now() - slot.spawnedAt < 1000) setTimeout(start, 1000).unref();
    else start();
  }

  /** Ends a host's process; `discard` marks it replaced on purpose (its 'close' is then no death). */
  private kill(slot: Slot, discard = true): Promise<void> {
    if (discard) slot.discarded = true;
    const host = slot.host;
    if (host.exitCode !== null || host.signalCode !== null) return Promise.resolve();
    // whoever awaits this (close) keeps the process alive until the host is gone
    host.ref();
    return new Promise((resolve) => {
      host.once('exit', () => resolve());
      host.kill('SIGKILL');
    });
  }

  private startWatchdog(): void {
    if (this.watchdog) return;
    this.watchdog = setInterval(() => this.checkHosts(), WATCHDOG_EVERY_MS);
    this.watchdog.unref();
  }

  /** The last resort: a busy host that has said nothing for far longer than its message's time-out allows. */
  private checkHosts(): void {
    const now = performance.now();
    let busy = false;
    for (const slot of this.allSlots()) {
      if (slot.flights.length === 0 || slot.discarded) continue;
      busy = true;
      const budget = Math.max(...slot.flights[0].items.map((p) => p.budgetMs));
      if (now - slot.lastHeard > budget + UNRESPONSIVE_MS) this.replace(slot, 'unresponsive');
    }
    if (!busy && this.watchdog) {
      clearInterval(this.watchdog);
      this.watchdog = null;
    }
  }
}

function crashMessage(memoryMb: number): string {
  return `The engine process running this run stopped (its code exhausted the process's memory, e.g. a Map or Set of millions of entries, beyond the sandbox memory limit of ${memoryMb} MB, or it crashed)`;
}

/** Started files left behind by processes that ended without closing their engine (killed): 8 bytes each, but not for ever. */
function removeStartedFilesOfGoneProcesses(): void {
  try {
    for (const name of readdirSync(STARTED_FILES_DIR)) {
      const owner = /^scoring-engine-host-(\d+)-/.exec(name);
      if (!owner || isAlive(Number(owner[1]))) continue;
      rmSync(join(STARTED_FILES_DIR, name), { force: true });
    }
  } catch {
    // a directory that cannot be listed: nothing to tidy
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The seq of the last message a dead host started (written by engine-host.mjs), or -1. */
function lastStarted(file: string): number {
  try {
    const bytes = readFileSync(file);
    return bytes.length >= 8 ? bytes.readDoubleLE(0) : -1;
  } catch {
    return -1;
  }
}

function parseStuckReport(text: string): { seq: number; culprit: number; node: number } | null {
  const line = text.split('\n').find((l) => l.trim() !== '');
  if (!line) return null;
  try {
    const report = JSON.parse(line) as { seq: number; culprit: number; node: number };
    return report.culprit >= 0 ? report : null;
  } catch {
    return null;
  }
}

/** Outputs of one crossing: items `idx` of the message, as "[[outputs…],[milliseconds…]]". */
interface CrossingOutput {
  idx: number[];
  text: string;
  crossMs: number;
}

/** A host's answer to a run message (`done` ends the message), or its request to be replaced. */
type HostMessage =
  | { t: 'ready' }
  | {
      t: 'r';
      seq: number;
      outs: CrossingOutput[];
      fails: { i: number; code: LimitCode; message: string; node: number }[];
      requeue: number[];
      done: boolean;
    }
  | { t: 'retire'; rssMb: number };
