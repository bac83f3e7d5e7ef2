import { pino, type Logger } from 'pino';

/**
 * The app's error log, kept in memory so that each 5xx the fuzzer sees can be reported with its
 * cause (the logged error, by request id), and errors outside requests (jobs) can be counted.
 */
export class ServerErrorLog {
  readonly logger: Logger;
  /** Errors logged outside any request (e.g. by the execution worker). */
  readonly background: string[] = [];
  private readonly byRequest = new Map<string, string>();

  constructor(echo = false) {
    this.logger = pino(
      { level: 'error', base: null },
      {
        write: (line: string) => {
          this.record(line);
          if (echo) process.stderr.write(line);
        },
      },
    );
  }

  /** The logged cause of the failed request `requestId`: the error's type, message and first frames. */
  causeOf(requestId: string | undefined): string | undefined {
    return requestId ? this.byRequest.get(requestId) : undefined;
  }

  private record(line: string): void {
    let entry: { requestId?: string; msg?: string; err?: { type?: string; message?: string; stack?: string } | string };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      return;
    }
    const err = entry.err;
    const cause =
      typeof err === 'string'
        ? err
        : err
          ? `${err.type ?? 'Error'}: ${err.message ?? ''}${err.stack ? `\n${err.stack.split('\n').slice(1, 5).join('\n')}` : ''}`
          : (entry.msg ?? line);
    if (entry.requestId) {
      if (this.byRequest.size > 10_000) this.byRequest.clear();
      this.byRequest.set(entry.requestId, cause);
    } else if (this.background.length < 1_000) {
      this.background.push(cause);
    }
  }
}
