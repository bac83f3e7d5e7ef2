import { createRequire } from 'node:module';
import type IsolatedVm from 'isolated-vm';

// Loaded through require: jest's ESM loader cannot lex this CommonJS module (it re-exports a native binary).
const ivm = createRequire(import.meta.url)('isolated-vm') as typeof IsolatedVm;
import { BOOTSTRAP_SOURCE } from './bootstrap-source.js';

export interface SyntaxProblem { message: string; line?: number; column?: number }

/** Why a crossing into the sandbox did not return normally. */
export class SandboxLimitError extends Error {
  constructor(readonly code: 'TIME_LIMIT_EXCEEDED' | 'MEMORY_LIMIT_EXCEEDED' | 'RESULT_NOT_SERIALIZABLE' | 'SCRIPT_ERROR', message: string) {
    super(message);
  }
}

/** A compiled scenario's entry function inside one isolate generation. */
export interface SandboxProgram { generation: number; entry: IsolatedVm.Reference<(...args: unknown[]) => unknown> }

/**
 * One isolate with one locked-down context holding every compiled scenario (contexts are costly; the
 * lockdown keeps runs from affecting each other). When the isolate dies (memory limit), the next use
 * creates a new one and programs are re-instantiated lazily (generation check).
 */
export class Sandbox {
  private isolate: IsolatedVm.Isolate | null = null;
  private context: IsolatedVm.Context | null = null;
  private rt: IsolatedVm.Reference<unknown> | null = null;
  private evalTestRef: IsolatedVm.Reference<(...args: unknown[]) => unknown> | null = null;
  private lastNodeRef: IsolatedVm.Reference<() => number> | null = null;
  private generation = 0;
  private readonly clock = new ivm.Callback(() => Number(process.hrtime.bigint() / 1000n));

  constructor(private readonly memoryMb: number) {}

  private ensure(): void {
    if (this.isolate && !this.isolate.isDisposed) return;
    this.releaseAll();
    this.generation++;
    this.isolate = new ivm.Isolate({ memoryLimit: this.memoryMb });
    this.context = this.isolate.createContextSync();
    const bootstrap = this.context.evalSync(BOOTSTRAP_SOURCE, { reference: true }) as IsolatedVm.Reference<(clock: unknown) => unknown>;
    this.rt = bootstrap.applySync(undefined, [this.clock], { result: { reference: true } }) as unknown as IsolatedVm.Reference<unknown>;
    bootstrap.release();
    this.evalTestRef = (this.rt as IsolatedVm.Reference<Record<string, unknown>>).getSync('evalTest', { reference: true }) as unknown as IsolatedVm.Reference<(...args: unknown[]) => unknown>;
    this.lastNodeRef = (this.rt as IsolatedVm.Reference<Record<string, unknown>>).getSync('lastNode', { reference: true }) as unknown as IsolatedVm.Reference<() => number>;
  }

  /** Index of the node the last crossing was executing (-1 if unknown), e.g. when a time limit stopped it. */
  lastNode(): number {
    if (!this.lastNodeRef || !this.isolate || this.isolate.isDisposed) return -1;
    try {
      return Number(this.lastNodeRef.applySync(undefined, [], { timeout: 50 }));
    } catch {
      return -1;
    }
  }

  /** Parses code in the sandbox (never on the host) and reports the first syntax error with a position relative to the code. */
  checkSyntax(code: string, kind: 'statements' | 'expression'): SyntaxProblem | null {
    this.ensure();
    const wrapped = kind === 'statements' ? `"use strict";(function(){\n${code}\n})` : `"use strict";(function(){return (\n${code}\n);})`;
    try {
      const script = this.isolate!.compileScriptSync(wrapped, { filename: 'code', lineOffset: -1 });
      script.release();
      return null;
    } catch (error) {
      const message = String((error as Error).message ?? error);
      const position = /\[code:(-?\d+):(\d+)\]$/.exec(message);
      const text = message.replace(/\s*\[code:-?\d+:\d+\]$/, '');
      if (!position) return { message: text };
      const line = Math.max(1, Number(position[1]));
      return { message: text, line, column: Number(position[2]) };
    }
  }

  /** Instantiates generated factory source; returns the entry for the current isolate generation. */
  instantiate(source: string): SandboxProgram {
    this.ensure();
    const factory = this.context!.evalSync(source, { reference: true }) as IsolatedVm.Reference<(rt: unknown) => unknown>;
    try {
      const entry = factory.applySync(undefined, [this.rt!.derefInto()], { result: { reference: true } }) as unknown as IsolatedVm.Reference<(...args: unknown[]) => unknown>;
      return { generation: this.generation, entry };
    } finally {
      factory.release();
    }
  }

  isCurrent(program: SandboxProgram | null): boolean {
    return !!program && program.generation === this.generation && !!this.isolate && !this.isolate.isDisposed;
  }

  /** One crossing with copied arguments and result. Maps limit failures to SandboxLimitError. */
  call<T>(program: SandboxProgram, args: unknown[], timeoutMs: number): T {
    let json: string;
    try {
      json = JSON.stringify(args);
    } catch (error) {
      throw new SandboxLimitError('RESULT_NOT_SERIALIZABLE', `Inputs are not JSON data: ${(error as Error).message}`);
    }
    try {
      return JSON.parse(program.entry.applySync(undefined, [json], { timeout: Math.max(1, Math.ceil(timeoutMs)) }) as string) as T;
    } catch (error) {
      throw this.limitError(error);
    }
  }

  evalTest(code: string, result: Record<string, unknown>, timeoutMs: number): { ok: boolean; value: boolean; description: string } {
    this.ensure();
    try {
      return this.evalTestRef!.applySync(undefined, [code, result], {
        arguments: { copy: true }, result: { copy: true }, timeout: Math.max(1, Math.ceil(timeoutMs)),
      }) as { ok: boolean; value: boolean; description: string };
    } catch (error) {
      const limit = this.limitError(error);
      return { ok: false, value: false, description: `${limit.code}: ${limit.message}` };
    }
  }

  private limitError(error: unknown): SandboxLimitError {
    const message = String((error as Error)?.message ?? error);
    if (this.isolate?.isDisposed || /disposed|memory limit/i.test(message)) {
      this.releaseAll();
      return new SandboxLimitError('MEMORY_LIMIT_EXCEEDED', 'The run exceeded the sandbox memory limit');
    }
    if (/timed out/i.test(message)) return new SandboxLimitError('TIME_LIMIT_EXCEEDED', 'The run exceeded its CPU time limit');
    if (/could not be cloned|clone/i.test(message)) {
      return new SandboxLimitError('RESULT_NOT_SERIALIZABLE', `A variable holds a value that is not JSON-like data: ${message}`);
    }
    return new SandboxLimitError('SCRIPT_ERROR', message);
  }

  private releaseAll(): void {
    try { this.evalTestRef?.release(); this.lastNodeRef?.release(); this.rt?.release(); } catch { /* isolate already gone */ }
    this.evalTestRef = null;
    this.lastNodeRef = null;
    this.rt = null;
    this.context = null;
    if (this.isolate && !this.isolate.isDisposed) this.isolate.dispose();
    this.isolate = null;
  }

  heapStatistics(): IsolatedVm.HeapStatistics | null {
    return this.isolate && !this.isolate.isDisposed ? this.isolate.getHeapStatisticsSync() : null;
  }

  dispose(): void {
    this.releaseAll();
  }
}
