/**
 * A background sweep started every `everyMs`: the first at once, never two at the same time (a sweep that
 * outlasts the interval is not joined by the next one), its failure reported and the timer going on. The timer
 * never keeps the process alive. The retention sweepers of records and of run results share it.
 */
export class PeriodicSweep {
  private timer?: NodeJS.Timeout;

  constructor(private readonly sweep: () => Promise<unknown>, private readonly everyMs: number, private readonly onError: (error: unknown) => void) {}

  start(): void {
    let sweeping = false;
    const tick = (): void => {
      if (sweeping) return;
      sweeping = true;
      this.sweep().catch(this.onError).finally(() => { sweeping = false; });
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
