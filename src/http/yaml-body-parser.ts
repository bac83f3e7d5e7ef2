import { Worker } from 'node:worker_threads';

const WORKER_URL = new URL('./yaml-parse-worker.mjs', import.meta.url);

/** What parsing a YAML body gave: its value, or a YAML problem (positioned when the parser knew where). */
export type YamlParseOutcome =
  | { ok: true; value: unknown }
  | { ok: false; message: string; line?: number; col?: number }
  /** The parse passed its deadline or the thread's memory: the body is too complex to parse here. */
  | { ok: false; tooComplex: true; message: string };

interface Job {
  id: number;
  text: string;
  resolve(outcome: YamlParseOutcome): void;
  reject(error: Error): void;
}

export interface YamlBodyParserSettings {
  /** Longest one body may take to parse (LIMIT_YAML_PARSE_MS). */
  deadlineMs: number;
  /** An anchor's uses times the aliases inside it, at most (the `yaml` package's `maxAliasCount`). */
  maxAliasCount: number;
  /** Heap of the parsing thread; a body that needs more is too complex. */
  maxHeapMb: number;
}

/**
 * Parses YAML request bodies on a worker thread of its own (yaml-parse-worker.mjs), one body at a time in the
 * order they came, so that no YAML body holds the API's event loop: the `yaml` package needs a second or more
 * for a 1 MiB body of many small nodes, however linear. A parse that passes `deadlineMs` is ended by
 * terminating the thread (the next body gets a fresh one) and answered as too complex. The thread starts with
 * the first YAML body and keeps the process alive only while it has work.
 */
export class YamlBodyParser {
  private worker: Worker | undefined;
  private readonly queue: Job[] = [];
  /** The body on the thread, and its deadline's timer once the thread began parsing it. */
  private current: { job: Job; timer?: NodeJS.Timeout } | undefined;
  private nextId = 1;
  private closed = false;

  constructor(private readonly settings: YamlBodyParserSettings) {}

  parse(text: string): Promise<YamlParseOutcome> {
    if (this.closed) return Promise.reject(new Error('the YAML body parser is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ id: this.nextId++, text, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const pending = [...(this.current ? [this.current.job] : []), ...this.queue.splice(0)];
    clearTimeout(this.current?.timer);
    this.current = undefined;
    for (const job of pending) job.reject(new Error('the YAML body parser is closed'));
    const worker = this.worker;
    this.worker = undefined;
    if (worker) await worker.terminate();
  }

  private pump(): void {
    if (this.current || this.closed) return;
    const job = this.queue.shift();
    if (!job) {
      this.worker?.unref();
      return;
    }
    const worker = this.worker ?? this.spawn();
    worker.ref();
    this.current = { job };
    worker.postMessage({ id: job.id, text: job.text, maxAliasCount: this.settings.maxAliasCount });
  }

  private spawn(): Worker {
    const worker = new Worker(WORKER_URL, {
      // plain JavaScript: no loader of the parent (tsx, jest) is needed, so none is inherited
      execArgv: [],
      resourceLimits: { maxOldGenerationSizeMb: this.settings.maxHeapMb },
    });
    worker.on('message', (answer: { id: number; started?: true } & YamlParseOutcome) => {
      const current = this.current;
      if (this.worker !== worker || current?.job.id !== answer.id) return;
      const { job } = current;
      if (answer.started) {
        current.timer = setTimeout(
          () => this.abandon(job, `took longer than LIMIT_YAML_PARSE_MS (${this.settings.deadlineMs} ms) to parse`),
          this.settings.deadlineMs,
        );
        return;
      }
      clearTimeout(current.timer);
      this.current = undefined;
      const { id: _id, ...outcome } = answer;
      job.resolve(outcome as YamlParseOutcome);
      this.pump();
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (this.worker !== worker) return;
      const job = this.current?.job;
      if (!job) return;
      if (error.code === 'ERR_WORKER_OUT_OF_MEMORY') this.abandon(job, 'needs more memory than its parse may take');
      else this.fail(job, error);
    });
    worker.on('exit', () => {
      if (this.worker !== worker) return;
      // An exit nobody asked for (not a deadline, not close): the body in flight fails, the next gets a fresh thread.
      this.worker = undefined;
      const job = this.current?.job;
      if (job) this.fail(job, new Error('the YAML parsing thread stopped'));
    });
    this.worker = worker;
    return worker;
  }

  /** The body in flight is too complex: its thread is replaced, so the next body does not wait for it. */
  private abandon(job: Job, why: string): void {
    this.finishWith(job, () => job.resolve({ ok: false, tooComplex: true, message: `The YAML body ${why}` }));
  }

  private fail(job: Job, error: Error): void {
    this.finishWith(job, () => job.reject(error));
  }

  private finishWith(job: Job, settle: () => void): void {
    if (this.current?.job !== job) return;
    clearTimeout(this.current.timer);
    this.current = undefined;
    const worker = this.worker;
    this.worker = undefined;
    if (worker) void worker.terminate();
    settle();
    this.pump();
  }
}
