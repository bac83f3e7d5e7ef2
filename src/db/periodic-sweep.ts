import type { Logger } from 'pino';

/**
 * A background sweep started every `everyMs`: the first at once, never two at the same time (a sweep that
 * outlasts the interval is not joined by the next one), its failure reported and the timer going on. The timer
 * never keeps the process alive. The retention sweepers of records and of run results run on it (BatchedSweeper), and
 * so does execution's stalled-work sweeper.
 */
export class PeriodicSweep {
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly sweep: () => Promise<unknown>,
    private readonly everyMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    let sweeping = false;
    const tick = (): void => {
      if (sweeping) return;
      sweeping = true;
      this.sweep()
        .catch(this.onError)
        .finally(() => {
          sweeping = false;
        });
    };
    this.timer = setInterval(tick, this.everyMs);
    this.timer.unref();
    tick();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

export interface BatchedSweepOptions {
  /** How often a sweep starts. */
  everyMs: number;
  /** Most rows one DELETE removes: short statements, short locks. */
  batchSize?: number;
  /** Pause between two DELETEs, so a large backlog never holds the database for long. */
  pauseMs?: number;
}

const DAY_MS = 86_400_000;

/** The moment `days` days before `now`: what a retention of that many days keeps is newer. */
export function daysBefore(now: Date, days: number): Date {
  return new Date(now.getTime() - days * DAY_MS);
}

/**
 * A retention sweeper: a PeriodicSweep of `sweepOnce`, whose deletes go in statements of at most `batchSize`
 * rows with a pause between statements (deleteInBatches), and which stop between statements once stop() is
 * called. Its failures are logged as `<what> retention sweep failed`.
 */
export abstract class BatchedSweeper {
  private readonly periodic: PeriodicSweep;
  protected stopped = false;
  protected readonly batchSize: number;
  private readonly pauseMs: number;

  constructor(
    options: BatchedSweepOptions,
    what: string,
    protected readonly logger: Logger,
  ) {
    this.batchSize = options.batchSize ?? 5000;
    this.pauseMs = options.pauseMs ?? 100;
    this.periodic = new PeriodicSweep(
      () => this.sweepOnce(),
      options.everyMs,
      (error) => this.logger.error({ err: error }, `${what} retention sweep failed`),
    );
  }

  start(): void {
    this.stopped = false;
    this.periodic.start();
  }

  stop(): void {
    this.stopped = true;
    this.periodic.stop();
  }

  abstract sweepOnce(now?: Date): Promise<unknown>;

  /**
   * Calls `deleteSome(batchSize)` until a call deletes fewer than batchSize rows or the sweeper is stopped,
   * pausing between calls; answers how many rows the calls deleted.
   */
  protected async deleteInBatches(deleteSome: (limit: number) => Promise<number>): Promise<number> {
    let deleted = 0;
    for (;;) {
      if (this.stopped) return deleted;
      const removed = await deleteSome(this.batchSize);
      deleted += removed;
      if (removed < this.batchSize) return deleted;
      await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
    }
  }
}
