import { closeSync, openSync, readSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';

/** How late the probe's timer fired (wall time) and how much of that the event loop's thread ran (CPU time). */
export interface Hold {
  /** How late a 10 ms timer fired (ms): the hold as a client sees it, wall time. */
  wallMs: number;
  /**
   * The event loop's own work in it (ms): the main thread's time on a core during the timer's wait
   * (/proc/self/task/<pid>/schedstat), at most `wallMs`. A hold far longer than this was the thread waiting for a
   * core (a loaded machine), not the service's code; undefined where schedstat cannot be read.
   */
  busyMs?: number;
}

export interface LoopHold extends Hold {
  /** When the hold ended (ms since the epoch). */
  at: number;
  /** The main thread's time waiting for a core meanwhile (ms). */
  waitMs?: number;
  /** The requests in flight then, or ended since the tick before (method and path). */
  inFlight: string[];
}

const TICK_MS = 10;

/**
 * Watches the service's event loop with a timer every 10 ms: how late each tick fires, and the main thread's CPU
 * and run-queue time meanwhile (schedstat, ns). Each tick's hold is charged to every request in flight; the 20
 * longest holds of the run (by wall time and by the loop's own work) are kept with the requests then in flight.
 */
export class LoopProbe {
  private readonly longestByWall: LoopHold[] = [];
  private readonly longestByBusy: LoopHold[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly schedstat: number | undefined;
  private readonly buffer = Buffer.alloc(128);

  /**
   * `charged()` answers the requests a hold ending now is charged to: those in flight, and those that ended since
   * the previous tick (a hold that ends a request, e.g. a validator compiled while its reply is encoded, is over
   * only after the response has closed), with their hold records.
   */
  constructor(private readonly charged: () => Map<IncomingMessage, Hold> = () => new Map()) {
    try {
      this.schedstat = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
    } catch {
      this.schedstat = undefined;
    }
  }

  start(): void {
    let expected = performance.now() + TICK_MS;
    let before = this.threadTimes();
    const tick = () => {
      const late = Math.max(0, performance.now() - expected);
      const now = this.threadTimes();
      const busyMs = now && before ? Math.min(late, (now.cpuNs - before.cpuNs) / 1e6) : undefined;
      const waitMs = now && before ? (now.waitNs - before.waitNs) / 1e6 : undefined;
      before = now;
      if (late >= 1) {
        const requests = this.charged();
        for (const held of requests.values()) {
          held.wallMs = Math.max(held.wallMs, late);
          if (busyMs !== undefined) held.busyMs = Math.max(held.busyMs ?? 0, busyMs);
        }
        if (late >= 20) {
          const hold = {
            at: Date.now(),
            wallMs: late,
            busyMs,
            waitMs,
            inFlight: [...requests.keys()].map((request) => `${request.method} ${(request.url ?? '').slice(0, 100)}`),
          };
          keepLongest(this.longestByWall, hold, (h) => h.wallMs);
          keepLongest(this.longestByBusy, hold, (h) => h.busyMs ?? 0);
        }
      }
      this.onTick();
      expected = performance.now() + TICK_MS;
      this.timer = setTimeout(tick, TICK_MS);
    };
    this.timer = setTimeout(tick, TICK_MS);
  }

  /** Called after each tick's holds were charged. */
  onTick: () => void = () => undefined;

  stop(): void {
    clearTimeout(this.timer);
    if (this.schedstat !== undefined) closeSync(this.schedstat);
  }

  longest(): { byWall: LoopHold[]; byBusy: LoopHold[] } {
    return { byWall: [...this.longestByWall], byBusy: [...this.longestByBusy] };
  }

  /** The main thread's time on a core and waiting for one, since it started (ns). */
  private threadTimes(): { cpuNs: number; waitNs: number } | undefined {
    if (this.schedstat === undefined) return undefined;
    const length = readSync(this.schedstat, this.buffer, 0, this.buffer.length, 0);
    const [cpu, wait] = this.buffer.toString('latin1', 0, length).split(' ');
    return { cpuNs: Number(cpu), waitNs: Number(wait) };
  }
}

function keepLongest(list: LoopHold[], hold: LoopHold, by: (hold: LoopHold) => number): void {
  list.push(hold);
  list.sort((a, b) => by(b) - by(a));
  list.length = Math.min(list.length, 20);
}

/**
 * The longest hold of this process's event loop while `work` runs (and one tick after, so a hold that ends it is
 * seen): for tests that an operation on a large input never holds the loop (`busyMs`, the loop's own work, is
 * what to assert where schedstat exists: wall time stretches on a loaded machine).
 */
export async function measureLoopHolds<T>(work: () => Promise<T>): Promise<{ result: T; longest: Hold }> {
  const probe = new LoopProbe();
  probe.start();
  try {
    const result = await work();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const { byWall, byBusy } = probe.longest();
    return {
      result,
      longest: { wallMs: byWall[0]?.wallMs ?? 0, busyMs: byBusy[0]?.busyMs ?? (byWall[0] ? undefined : 0) },
    };
  } finally {
    probe.stop();
  }
}
