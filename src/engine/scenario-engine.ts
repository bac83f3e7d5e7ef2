import { defaultEngineHosts, defaultHostsPerTenant } from './pool/pool-size.js';
import { LRUCache } from 'lru-cache';
import { compileScenario, type NodePlan } from './compiler/compile-scenario.js';
import { CompiledScenario } from './compiled-scenario.js';
import { parseScenarioDocument } from './document/parse-document.js';
import { InputValidationError, type InputViolation } from './errors/input-validation-error.js';
import { ScenarioCompileError } from './errors/scenario-compile-error.js';
import { ScenarioRunError, type RunErrorCode } from './errors/scenario-run-error.js';
import {
  DEFAULT_POOL_SETTINGS,
  EnginePool,
  type EngineEvent,
  type EnginePoolSettings,
  type PoolStats,
} from './pool/engine-pool.js';
import type { EnginePorts, HttpPort, HttpRequest, LookupRequest, LookupResult, PortCallSite } from './ports.js';
import { PortUnavailableError } from './errors/port-unavailable-error.js';
import { checkInputs } from './runtime/check-inputs.js';
import { performHttpCall } from './runtime/http-node.js';
import { ProgramChecker } from './sandbox/program-checker.js';
import type {
  DataLookupNodeSettings,
  Diagnostic,
  EngineLimits,
  HttpCallNodeSettings,
  RunBudget,
  RunContext,
  RunLane,
  RunResult,
  ScenarioCallNodeSettings,
  ScenarioDocument,
  TestCaseReport,
  TestCaseSpec,
  TraceEntry,
} from './types.js';

export interface ScenarioEngineOptions {
  ports: EnginePorts;
  limits?: { timeoutMs?: number; memoryMb?: number; maxCallDepth?: number; testCasesBudgetMs?: number };
  cacheSize?: number;
  /** The engine hosts (child processes); defaults: three per core (at least four), a tenant holds at most a third of them (at least one). */
  pool?: Partial<Omit<EnginePoolSettings, 'memoryMb'>>;
  /** Hosts that died or were replaced, tenants quarantined: for the log and the metrics. */
  onEvent?: (event: EngineEvent) => void;
}

type Step =
  | { s: 'end'; result: Record<string, unknown>; trace?: TraceEntry[] }
  | {
      s: 'pause';
      node: number;
      request: Record<string, unknown>;
      state: Record<string, unknown>;
      trace: TraceEntry[] | null;
      seed: number;
    }
  | { s: 'invalid'; violations: InputViolation[] }
  | { s: 'error'; node: number; code: RunErrorCode; message: string; trace: TraceEntry[] | null };

interface Resume {
  values: unknown[];
  names?: string[];
  read: Record<string, unknown>;
  micros: number;
}

/** A run's budget; `sharedMs` when its limit is what was left of a shared budget. */
interface OwnBudget extends RunBudget {
  sharedMs?: number;
}

const RUN_SEED = 0x5eed;
const DEFAULT_LIMITS: EngineLimits = { timeoutMs: 1000, memoryMb: 128, maxCallDepth: 8, testCasesBudgetMs: 3000 };

/**
 * Compiles scenario documents once (bounded cache) and runs them in engine host processes, each tenant in
 * sandboxes of its own, reaching the outside only through ports. No scenario code runs in the caller's process:
 * every crossing into a sandbox happens in a host, which may die without taking the caller with it.
 */
export class ScenarioEngine {
  private readonly ports: EnginePorts;
  private readonly limits: EngineLimits;
  private readonly checker: ProgramChecker;
  private readonly cache: LRUCache<string, CompiledScenario>;
  private readonly poolSettings: EnginePoolSettings;
  private poolInstance: EnginePool | null = null;
  private readonly onEvent: (event: EngineEvent) => void;
  private programIds = 0;
  private forgotten: number[] = [];

  constructor(options: ScenarioEngineOptions) {
    this.ports = options.ports;
    this.limits = { ...DEFAULT_LIMITS, ...stripUndefined(options.limits ?? {}) };
    this.checker = new ProgramChecker(this.limits.memoryMb);
    const hosts = options.pool?.hosts ?? defaultEngineHosts();
    this.poolSettings = {
      ...DEFAULT_POOL_SETTINGS,
      ...stripUndefined(options.pool ?? {}),
      hosts,
      hostsPerTenant: options.pool?.hostsPerTenant ?? defaultHostsPerTenant(hosts),
      memoryMb: this.limits.memoryMb,
    };
    this.onEvent = options.onEvent ?? (() => {});
    this.cache = new LRUCache<string, CompiledScenario>({
      max: options.cacheSize ?? 1000,
      dispose: (compiled) => this.forget(compiled.program.id),
    });
  }

  /** Compiles (or returns the cached compilation for) `cacheKey`; throws ScenarioCompileError listing every diagnostic. */
  compile(cacheKey: string, doc: ScenarioDocument): CompiledScenario {
    const cached = this.cache.get(cacheKey);
    if (cached) return cached;
    const { plan, diagnostics } = compileScenario(doc, (code, kind) => this.checker.checkSyntax(code, kind));
    if (!plan) throw new ScenarioCompileError(diagnostics);
    try {
      this.checker.checkProgram(plan.source);
    } catch (error) {
      // code that parses alone but not inside its generated function (e.g. unbalanced braces closing the wrapper)
      throw new ScenarioCompileError([
        { code: 'SCRIPT_SYNTAX_ERROR', message: `Scenario code does not compile: ${(error as Error).message}` },
      ]);
    }
    const compiled = new CompiledScenario(cacheKey, plan, ++this.programIds);
    this.cache.set(cacheKey, compiled);
    return compiled;
  }

  /** Shape, compile and external-reference diagnostics (collections, deployed scenarios); [] when the document is fine. */
  async diagnose(doc: ScenarioDocument, context: RunContext): Promise<Diagnostic[]> {
    const { diagnostics } = compileScenario(doc, (code, kind) => this.checker.checkSyntax(code, kind));
    const parsed = parseScenarioDocument(doc);
    for (const node of parsed.graph.nodes) {
      const settings = parsed.settings.get(node.id);
      if (!settings) continue;
      const path = `nodeProperties.${node.id}.content`;
      if (node.type === 'DATA_LOOKUP') {
        const s = settings as DataLookupNodeSettings;
        const table = await this.ports.lookups.describe({ ownerId: context.ownerId, collection: s.collection });
        if (!table) {
          diagnostics.push({
            code: 'LOOKUP_COLLECTION_NOT_FOUND',
            message: `Lookup "${node.id}" reads collection "${s.collection}", which does not exist`,
            nodeId: node.id,
            path: `${path}.collection`,
          });
          continue;
        }
        if (!table.columns.includes(s.keyColumn)) {
          diagnostics.push({
            code: 'LOOKUP_COLUMN_NOT_FOUND',
            message: `Collection "${s.collection}" has no column "${s.keyColumn}"`,
            nodeId: node.id,
            path: `${path}.keyColumn`,
          });
        } else if (!table.indexedColumns.includes(s.keyColumn)) {
          diagnostics.push({
            code: 'LOOKUP_KEY_NOT_INDEXED',
            message: `Column "${s.keyColumn}" of collection "${s.collection}" has no index; lookups need an indexed key column`,
            nodeId: node.id,
            path: `${path}.keyColumn`,
          });
        }
        (s.columns ?? []).forEach((column, k) => {
          if (!table.columns.includes(column)) {
            diagnostics.push({
              code: 'LOOKUP_COLUMN_NOT_FOUND',
              message: `Collection "${s.collection}" has no column "${column}"`,
              nodeId: node.id,
              path: `${path}.columns[${k}]`,
            });
          }
        });
      } else if (node.type === 'SCENARIO_CALL') {
        const s = settings as ScenarioCallNodeSettings;
        if (
          s.scenario &&
          !(await this.ports.scenarios.resolveDeployed({ ownerId: context.ownerId, name: s.scenario }))
        ) {
          diagnostics.push({
            code: 'SCENARIO_NOT_DEPLOYED',
            message: `Scenario call "${node.id}" calls "${s.scenario}", which has no deployed version`,
            nodeId: node.id,
            path: `${path}.scenario`,
          });
        }
      }
    }
    return diagnostics;
  }

  async run(
    compiled: CompiledScenario,
    inputs: Record<string, unknown>,
    context: RunContext & { trace?: boolean },
  ): Promise<RunResult> {
    const plan = compiled.plan;
    const { state, violations } = checkInputs(plan.inputs, inputs);
    // One time budget for the run and every scenario it calls.
    const budget: OwnBudget = context.budget ?? this.budgetWithin(context.shared);
    try {
      if (violations.length > 0) {
        const skip = violations.map((v) => v.variable);
        const step = await this.cross(compiled, context, [state, plan.startIndex, null, false, RUN_SEED, skip], budget);
        throw new InputValidationError([...violations, ...(step.s === 'invalid' ? step.violations : [])]);
      }
      const trace: TraceEntry[] | undefined = context.trace ? [] : undefined;
      let args: unknown[] = [state, plan.startIndex, null, !!context.trace, RUN_SEED, null];
      for (;;) {
        const step = await this.cross(compiled, context, args, budget);
        if (trace && 'trace' in step && step.trace) trace.push(...step.trace);
        switch (step.s) {
          case 'end':
            return trace ? { result: step.result, trace } : { result: step.result };
          case 'invalid':
            throw new InputValidationError(step.violations);
          case 'error': {
            const node = plan.nodes[step.node] as NodePlan | undefined;
            if (!node) throw new ScenarioRunError(step.code, `The run failed: ${step.message}`);
            throw new ScenarioRunError(
              step.code,
              `Node "${node.name}" (${node.type}) failed: ${step.message}`,
              node.id,
              node.name,
              node.type,
            );
          }
          case 'pause': {
            const node = plan.nodes[step.node];
            const started = performance.now();
            const resume = await this.performNode(node, step.request, { ...context, budget });
            resume.micros = Math.round((performance.now() - started) * 1000);
            args = [step.state, step.node, resume, !!context.trace, step.seed, null];
          }
        }
      }
    } finally {
      if (!context.budget && context.shared) context.shared.usedMs += budget.usedMs;
    }
  }

  /** A budget for the test cases (and validation data) of one validation: every run and expression uses it up. */
  testCasesBudget(): RunBudget {
    return { usedMs: 0, limitMs: this.limits.testCasesBudgetMs };
  }

  /** Runs the test cases one after another under one shared budget (context.shared, else a new testCasesBudget()). */
  async runTestCases(
    compiled: CompiledScenario,
    testCases: TestCaseSpec[],
    context: RunContext,
  ): Promise<TestCaseReport[]> {
    const shared = context.shared ?? this.testCasesBudget();
    const reports: TestCaseReport[] = [];
    for (const testCase of testCases) {
      const base = { id: testCase.id ?? null, name: testCase.name ?? null };
      if (testCase.ignore) {
        reports.push({ ...base, passed: false, skipped: true, actual: null });
        continue;
      }
      const budget = this.budgetWithin(shared);
      let result: Record<string, unknown>;
      try {
        result = (
          await this.run(compiled, testCase.variables ?? {}, {
            ownerId: context.ownerId,
            budget,
            lane: context.lane ?? 'validation',
          })
        ).result;
      } catch (error) {
        const code = (error as { code?: string }).code ?? 'ERROR';
        reports.push({
          ...base,
          passed: false,
          skipped: false,
          actual: null,
          reason: `${code}: ${(error as Error).message}`,
        });
        continue;
      } finally {
        shared.usedMs += budget.usedMs;
      }
      const before = budget.usedMs;
      const verdict = await this.evalTest(
        context.ownerId,
        testCase.expression.code,
        result,
        budget,
        context.lane ?? 'validation',
      );
      shared.usedMs += budget.usedMs - before;
      reports.push({
        ...base,
        passed: verdict.value,
        skipped: false,
        actual: result,
        ...(verdict.value ? {} : { reason: verdict.description }),
      });
    }
    return reports;
  }

  async dispose(): Promise<void> {
    this.cache.clear();
    this.checker.dispose();
    await this.poolInstance?.close();
  }

  /** Sandbox work items (steps of runs, test expressions) waiting for a host, by lane (all 0 before the first run). */
  queuedItems(): Record<RunLane, number> {
    return this.poolInstance?.queued() ?? { live: 0, validation: 0, bulk: 0, background: 0 };
  }

  /** Messages, crossings and items the hosts handled; host deaths and replacements, quarantined tenants (null before the first run). */
  poolStats(): PoolStats | null {
    return this.poolInstance?.stats() ?? null;
  }

  /**
   * Starts the engine hosts now rather than at the first run, so the first score does not wait for them (about
   * 150 ms of process start-up each, in parallel). The service calls it once it listens; an engine used only for
   * compiling, or in tests, never starts a host it does not need.
   */
  warmUp(): void {
    void this.pool;
  }

  /** @internal tests and benchmarks: the engine hosts' process ids ([] before the first run). */
  hostPids(): number[] {
    return this.poolInstance?.hostPids() ?? [];
  }

  private get pool(): EnginePool {
    this.poolInstance ??= new EnginePool(this.poolSettings, this.onEvent);
    return this.poolInstance;
  }

  private forget(programId: number): void {
    if (!this.poolInstance) return;
    this.forgotten.push(programId);
    if (this.forgotten.length > 1) return;
    queueMicrotask(() => {
      const ids = this.forgotten;
      this.forgotten = [];
      this.poolInstance?.forget(ids);
    });
  }

  private budgetWithin(shared: RunBudget | undefined): OwnBudget {
    if (!shared) return { usedMs: 0, limitMs: this.limits.timeoutMs };
    const left = Math.max(0, shared.limitMs - shared.usedMs);
    return left < this.limits.timeoutMs
      ? { usedMs: 0, limitMs: left, sharedMs: shared.limitMs }
      : { usedMs: 0, limitMs: this.limits.timeoutMs };
  }

  /** One crossing into the tenant's sandbox, on a worker. */
  private async cross(
    compiled: CompiledScenario,
    context: RunContext,
    args: unknown[],
    budget: OwnBudget,
  ): Promise<Step> {
    const remaining = budget.limitMs - budget.usedMs;
    if (remaining <= 0) throw this.timeLimitError(budget);
    let item: string;
    try {
      item = `0,${compiled.program.id},${JSON.stringify(args)}`;
    } catch (error) {
      throw new ScenarioRunError('RESULT_NOT_SERIALIZABLE', `Inputs are not JSON data: ${(error as Error).message}`);
    }
    const outcome = await this.pool.submit(context.ownerId, compiled.program, item, remaining, context.lane);
    if (outcome.ok) {
      budget.usedMs += outcome.ms;
      return outcome.output as Step;
    }
    const node = outcome.node >= 0 ? compiled.plan.nodes[outcome.node] : undefined;
    if (outcome.code === 'TIME_LIMIT_EXCEEDED') {
      budget.usedMs = budget.limitMs;
      throw this.timeLimitError(budget, node);
    }
    const message =
      outcome.code === 'MEMORY_LIMIT_EXCEEDED' ? `${outcome.message} of ${this.limits.memoryMb} MB` : outcome.message;
    if (node)
      throw new ScenarioRunError(
        outcome.code,
        `${message} in node "${node.name}" (${node.type})`,
        node.id,
        node.name,
        node.type,
      );
    throw new ScenarioRunError(outcome.code, message);
  }

  private timeLimitError(budget: OwnBudget, node?: NodePlan): ScenarioRunError {
    const limit =
      budget.sharedMs !== undefined
        ? `its CPU time limit: the ${Math.round(budget.limitMs)} ms left of the ${budget.sharedMs} ms its validation's test cases share`
        : `its CPU time limit of ${this.limits.timeoutMs} ms`;
    const message = `The run exceeded ${limit}`;
    if (node)
      return new ScenarioRunError(
        'TIME_LIMIT_EXCEEDED',
        `${message} in node "${node.name}" (${node.type})`,
        node.id,
        node.name,
        node.type,
      );
    return new ScenarioRunError('TIME_LIMIT_EXCEEDED', message);
  }

  /** Evaluates a test case's expression over a run's result, in the tenant's sandbox. */
  private async evalTest(
    ownerId: number,
    code: string,
    result: Record<string, unknown>,
    budget: OwnBudget,
    lane: RunLane,
  ): Promise<{ value: boolean; description: string }> {
    const remaining = budget.limitMs - budget.usedMs;
    if (remaining <= 0)
      return { value: false, description: `TIME_LIMIT_EXCEEDED: ${this.timeLimitError(budget).message}` };
    const outcome = await this.pool.submit(
      ownerId,
      null,
      `1,${JSON.stringify(code)},${JSON.stringify(result)}`,
      remaining,
      lane,
    );
    if (!outcome.ok) {
      if (outcome.code === 'TIME_LIMIT_EXCEEDED') budget.usedMs = budget.limitMs;
      const message = outcome.code === 'TIME_LIMIT_EXCEEDED' ? this.timeLimitError(budget).message : outcome.message;
      return { value: false, description: `${outcome.code}: ${message}` };
    }
    budget.usedMs += outcome.ms;
    return outcome.output as { value: boolean; description: string };
  }

  private async performNode(node: NodePlan, request: Record<string, unknown>, context: RunContext): Promise<Resume> {
    const fail = (code: RunErrorCode, message: string, details?: unknown): never => {
      throw new ScenarioRunError(
        code,
        `Node "${node.name}" (${node.type}) failed: ${message}`,
        node.id,
        node.name,
        node.type,
        details,
      );
    };
    switch (node.type) {
      case 'DATA_LOOKUP': {
        const s = node.settings as DataLookupNodeSettings;
        const key = request.key;
        const read = { [s.joinVariable]: key };
        if (key === null) return { values: [s.mode === 'ALL' ? [] : null], read, micros: 0 };
        let found: unknown;
        try {
          found = await this.lookup(
            node,
            {
              ownerId: context.ownerId,
              collection: s.collection,
              keyColumn: s.keyColumn,
              key,
              columns: s.columns,
              mode: s.mode,
            },
            context,
          );
        } catch (error) {
          if (error instanceof PortUnavailableError) throw error;
          return fail('LOOKUP_FAILED', `lookup in "${s.collection}" failed: ${(error as Error).message}`);
        }
        return { values: [found ?? (s.mode === 'ALL' ? [] : null)], read, micros: 0 };
      }
      case 'SCENARIO_CALL':
        return this.callScenario(node, request, context, fail);
      case 'HTTP_CALL': {
        const s = node.settings as HttpCallNodeSettings;
        const outcome = await performHttpCall(
          this.httpPortFor(node, context),
          s,
          request as { vars: Record<string, unknown>; body: unknown },
        );
        const read = {
          ...(request.vars as Record<string, unknown>),
          ...(s.bodyExpression ? { body: request.body } : {}),
        };
        if (outcome.ok)
          return { values: s.catchErrors ? [outcome.response, null] : [outcome.response], read, micros: 0 };
        if (s.catchErrors) return { values: [null, outcome.failure], read, micros: 0 };
        return fail(
          outcome.failure.code === 'HTTP_TARGET_REFUSED' ? 'HTTP_TARGET_REFUSED' : 'HTTP_CALL_FAILED',
          outcome.failure.message,
          outcome.failure,
        );
      }
      default:
        return fail('SCRIPT_ERROR', 'node does not pause');
    }
  }

  /** The lookups port, through the run's lookup hook when it has one. */
  private lookup(node: NodePlan, request: LookupRequest, context: RunContext): Promise<LookupResult> {
    const proceed = (asked: LookupRequest) => this.ports.lookups.lookup(asked);
    const hooks = context.portHooks;
    return hooks?.lookup ? hooks.lookup(callSite(node, context), request, proceed) : proceed(request);
  }

  /** The HTTP port an HTTP_CALL node uses: through the run's HTTP hook when it has one (each retry is a call of its own). */
  private httpPortFor(node: NodePlan, context: RunContext): HttpPort {
    const hooks = context.portHooks;
    if (!hooks?.http) return this.ports.http;
    const site = callSite(node, context);
    const proceed = (request: HttpRequest) => this.ports.http.request(request);
    return { request: (request) => hooks.http!(site, request, proceed) };
  }

  private async callScenario(
    node: NodePlan,
    request: Record<string, unknown>,
    context: RunContext,
    fail: (code: RunErrorCode, message: string, details?: unknown) => never,
  ): Promise<Resume> {
    const s = node.settings as ScenarioCallNodeSettings;
    const name = request.name;
    const inputs = request.inputs;
    const read = { scenario: name, inputs };
    if (typeof name !== 'string' || name === '')
      return fail('SCENARIO_CALL_FAILED', `the scenario name must be a non-empty string, got ${JSON.stringify(name)}`);
    if (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs))
      return fail('SCENARIO_CALL_FAILED', 'the callee inputs must be an object (MAP)');
    const stack = context.callStack ?? [];
    if (stack.includes(name))
      return fail('CALL_CYCLE', `scenario call cycle: ${[...stack, name].join(' → ')}`, { chain: [...stack, name] });
    if (stack.length >= this.limits.maxCallDepth) {
      return fail(
        'CALL_DEPTH_EXCEEDED',
        `scenario calls nest deeper than ${this.limits.maxCallDepth}: ${[...stack, name].join(' → ')}`,
        { chain: [...stack, name] },
      );
    }
    const deployed = await this.ports.scenarios.resolveDeployed({ ownerId: context.ownerId, name });
    if (!deployed) return fail('NOT_DEPLOYED', `scenario "${name}" has no deployed version`);
    let callee: CompiledScenario;
    try {
      callee = this.compile(deployed.cacheKey, deployed.document);
    } catch (error) {
      return fail('SCENARIO_CALL_FAILED', `scenario "${name}" does not compile: ${(error as Error).message}`);
    }
    let result: Record<string, unknown>;
    try {
      result = (
        await this.run(callee, inputs as Record<string, unknown>, {
          ownerId: context.ownerId,
          callStack: [...stack, name],
          budget: context.budget,
          portHooks: context.portHooks,
          callPath: [...(context.callPath ?? []), node.id],
          lane: context.lane,
        })
      ).result;
    } catch (error) {
      if (error instanceof PortUnavailableError) throw error;
      if (
        error instanceof ScenarioRunError &&
        [
          'CALL_CYCLE',
          'CALL_DEPTH_EXCEEDED',
          'NOT_DEPLOYED',
          'TIME_LIMIT_EXCEEDED',
          'MEMORY_LIMIT_EXCEEDED',
          'ENGINE_CRASHED',
        ].includes(error.code)
      )
        throw error;
      const details = error instanceof InputValidationError ? error.violations : undefined;
      return fail('SCENARIO_CALL_FAILED', `scenario "${name}" failed: ${(error as Error).message}`, details);
    }
    const selected = s.outputs ? Object.fromEntries(s.outputs.map((o) => [o, result[o] ?? null])) : result;
    if (s.outputVariable) return { values: [selected], read, micros: 0 };
    if (s.outputs) return { values: s.outputs.map((o) => selected[o]), read, micros: 0 };
    return { values: Object.values(selected), names: Object.keys(selected), read, micros: 0 };
  }
}

function callSite(node: NodePlan, context: RunContext): PortCallSite {
  return { nodeId: node.id, callPath: context.callPath ?? [] };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
