/**
 * A value read from MySQL or the job store when Prometheus scrapes, time-boxed so that a scrape
 * never waits on a dependency that is down or slow: past `timeoutMs` (or on an error) the value is
 * NaN, which Prometheus stores as "no number" rather than a misleading zero. A read still running
 * from an earlier scrape is waited for again instead of starting another, so scrapes during an
 * outage do not pile up queries.
 */
export class ScrapeProbe {
  private reading?: Promise<number>;

  constructor(
    private readonly read: () => Promise<number>,
    private readonly timeoutMs: number,
    private readonly onFailure: (error: unknown) => void,
  ) {}

  async value(): Promise<number> {
    this.reading ??= this.start();
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<number>((resolve) => {
      timer = setTimeout(() => resolve(Number.NaN), this.timeoutMs);
      timer.unref();
    });
    try {
      return await Promise.race([this.reading, timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  private start(): Promise<number> {
    return Promise.resolve()
      .then(() => this.read())
      .then(Number, (error: unknown) => {
        this.onFailure(error);
        return Number.NaN;
      })
      .finally(() => {
        this.reading = undefined;
      });
  }
}
