import { createRequire } from 'node:module';
import type IsolatedVm from 'isolated-vm';
import { BOOTSTRAP_SOURCE } from './bootstrap-source.js';

// Loaded through require: jest's ESM loader cannot lex this CommonJS module (it re-exports a native binary).
const ivm = createRequire(import.meta.url)('isolated-vm') as typeof IsolatedVm;

export interface SyntaxProblem {
  message: string;
  line?: number;
  column?: number;
}

/**
 * Compile-time checks on the host, in an isolate of its own that never runs scenario code: parsing a
 * snippet, and loading a generated program (which only hands code to the sandbox's Function constructor,
 * so a body that parses alone but breaks its generated function is found at compile time, not at run time).
 */
export class ProgramChecker {
  private isolate: IsolatedVm.Isolate | null = null;
  private context: IsolatedVm.Context | null = null;
  private rt: IsolatedVm.Reference<unknown> | null = null;

  constructor(private readonly memoryMb: number) {}

  /** The first syntax error of `code`, with a position relative to the code, or null. */
  checkSyntax(code: string, kind: 'statements' | 'expression'): SyntaxProblem | null {
    const isolate = this.ensure();
    const wrapped =
      kind === 'statements'
        ? `"use strict";(function(){\n${code}\n})`
        : `"use strict";(function(){return (\n${code}\n);})`;
    try {
      isolate.compileScriptSync(wrapped, { filename: 'code', lineOffset: -1 }).release();
      return null;
    } catch (error) {
      const message = String((error as Error).message ?? error);
      const position = /\[code:(-?\d+):(\d+)\]$/.exec(message);
      const text = message.replace(/\s*\[code:-?\d+:\d+\]$/, '');
      if (!position) return { message: text };
      return { message: text, line: Math.max(1, Number(position[1])), column: Number(position[2]) };
    }
  }

  /** Loads a generated program once and drops it; throws with V8's message when it does not load. */
  checkProgram(source: string): void {
    this.ensure();
    try {
      const factory = this.context!.evalSync(source, { reference: true, timeout: 10_000 }) as IsolatedVm.Reference<
        (rt: unknown) => unknown
      >;
      try {
        factory.applySync(undefined, [this.rt!.derefInto()], { timeout: 10_000 });
      } finally {
        factory.release();
      }
    } catch (error) {
      if (this.isolate?.isDisposed) this.reset();
      throw error;
    }
  }

  dispose(): void {
    this.reset();
  }

  private ensure(): IsolatedVm.Isolate {
    if (this.isolate && !this.isolate.isDisposed) return this.isolate;
    this.reset();
    const isolate = new ivm.Isolate({ memoryLimit: this.memoryMb });
    const context = isolate.createContextSync();
    const bootstrap = context.evalSync(BOOTSTRAP_SOURCE, { reference: true }) as IsolatedVm.Reference<
      (...args: unknown[]) => unknown
    >;
    const clock = new ivm.Callback(() => 0);
    const progress = new ivm.ExternalCopy(new SharedArrayBuffer(8)).copyInto();
    this.rt = bootstrap.applySync(undefined, [clock, progress, 0], {
      result: { reference: true },
    }) as unknown as IsolatedVm.Reference<unknown>;
    bootstrap.release();
    this.isolate = isolate;
    this.context = context;
    return isolate;
  }

  private reset(): void {
    try {
      this.rt?.release();
    } catch {
      /* isolate already gone */
    }
    this.rt = null;
    this.context = null;
    if (this.isolate && !this.isolate.isDisposed) this.isolate.dispose();
    this.isolate = null;
  }
}
