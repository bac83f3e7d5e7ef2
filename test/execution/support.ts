import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A job-store key prefix of its own for each test file, so parallel test files never take each other's jobs. */
export function isolateJobStore(label: string): string {
  const prefix = `scoring:test:${label}:${randomUUID().slice(0, 8)}:`;
  process.env.JOBS_KEY_PREFIX = prefix;
  process.env.JOB_LOCK_LIFETIME_MS ??= '2000';
  process.env.JOB_POLL_MS ??= '500';
  return prefix;
}

export async function waitFor<T>(probe: () => Promise<T | undefined>, timeoutMs = 10_000, everyMs = 20): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export interface ReceivedCallback {
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A callback receiver on 127.0.0.1 answering each request with the next status of `statuses` (the last one repeats). */
export class CallbackReceiver {
  readonly received: ReceivedCallback[] = [];
  private server?: http.Server;
  private statuses: number[] = [200];

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const status = this.statuses.length > 1 ? (this.statuses.shift() as number) : this.statuses[0];
        res.writeHead(status, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  url(path: string): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}${path}`;
  }

  answer(...statuses: number[]): void {
    this.statuses = statuses;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}
