// @ts-check
/**
 * An engine host: a child process that runs scenario programs for the pool (src/engine/pool/engine-pool.ts), so
 * tenant code never shares a process with the API's or the worker's event loop. V8 can abort a whole process on
 * a heap exhausted inside an isolate (isolated-vm issues #527 and #107: a Map or Set grown past a few million
 * entries); here that costs this process and the one message it was running, and the pool starts another host.
 * Plain JavaScript on purpose: it needs no TypeScript transform, so it starts the same way under tsx, node and
 * jest. Everything it runs arrives as text (the sandbox bootstrap in the init message, generated program
 * sources and item arguments in run messages).
 *
 * One host runs one message at a time on its main thread (the pool never sends it two tenants' messages at
 * once), so a host that dies takes only the message of the tenant whose code was running.
 *
 * Isolation: one isolated-vm isolate (own heap, own memory limit) with one locked-down context per tenant,
 * kept in a small LRU. A message carries items of one tenant only, so a tenant's failure — a time limit, a memory
 * limit that disposes its isolate — never touches another tenant's isolate or work.
 *
 * Messages in (IPC):
 *   {t:'init', bootstrapSource, memoryMb, maxIsolates, windowMs, sliceMs, stuckGraceMs, retireRssMb, startedFile, onnxSessionsMb}  (first, once)
 *   {t:'run', seq, owner, sources:[[programId, source, onnxModels?]], pids:number[], items:string[], budgets:number[]}
 *     onnxModels: [[sha256, base64]], the ONNX files the program's MODEL nodes call (kept while a program uses them)
 *   {t:'forget', pids:number[]}
 * Messages out (IPC):
 *   {t:'ready'}   the host has started (a host that dies before saying so is started again only after a pause)
 *   {t:'r', seq, outs:[{idx:number[], text, crossMs}], fails:[{i, code, message, node}], requeue:number[], done:boolean}
 *     outs: the outputs of items idx, in order (see batch in bootstrap); fails: items that failed as a whole
 *     (a limit or a broken sandbox); requeue: items not run because an earlier item of the message hit a limit, or
 *     the message used up its slice (the pool queues them again behind other tenants' work); done: the message is finished.
 *   {t:'retire', rssMb}  the host's resident memory passed retireRssMb: the pool replaces it once it is idle.
 * startedFile: before running message seq, the host writes seq there (8 bytes, a double, little-endian). The
 * pool reads it only when the host has died, to know whether the message it was running had started: a file
 * write costs the pool nothing while the host lives, where a message would wake it once more per message.
 * The watchdog (a thread of this process, below) writes one JSON line to fd 4 before it kills the process:
 *   {seq, culprit, node}  the crossing of message seq overran its time-out while item culprit ran node.
 */
import { openSync, writeSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { OnnxSessions } from './onnx-sessions.mjs';

/** @type {typeof import('isolated-vm')} */
/** @type {typeof import('isolated-vm')} */
const ivm = createRequire(import.meta.url)('isolated-vm');

/**
 * @typedef {'TIME_LIMIT_EXCEEDED' | 'MEMORY_LIMIT_EXCEEDED' | 'SCRIPT_ERROR'} LimitCode
 * @typedef {{ t: 'init', bootstrapSource: string, memoryMb: number, maxIsolates: number, windowMs: number, sliceMs: number, stuckGraceMs: number, retireRssMb: number, startedFile: string, onnxSessionsMb?: number }} InitMessage
 * @typedef {{ t: 'run', seq: number, owner: number, sources: ([number, string] | [number, string, [string, string][]])[], pids: number[], items: string[], budgets: number[] }} RunMessage
 * @typedef {{ t: 'forget', pids: number[] }} ForgetMessage
 * @typedef {{ idx: number[], text: string, crossMs: number }} CrossingOutput
 * @typedef {{ i: number, code: LimitCode, message: string, node: number }} ItemFailure
 * @typedef {import('isolated-vm').Reference<any>} AnyReference
 * @typedef {{ isolate: import('isolated-vm').Isolate, context: import('isolated-vm').Context, rt: AnyReference, batch: AnyReference, collected: AnyReference, forget: AnyReference, programs: Set<number> }} Sandbox
 */

/** @param {object} message */
function send(message) {
  process.send?.(message);
}

/** Set by the init message. */
let bootstrapSource = '';
let memoryMb = 128;
let maxIsolates = 32;
let windowMs = 10;
let retireRssMb = 0;
let sliceMs = 50;
/** Where the seq of the message being run is written (see startedFile above), and the bytes written there. */
let startedFd = -1;
const startedBytes = Buffer.alloc(8);
/** Written by the sandbox runtime: [0] message index of the running item (-2 when all are done), [1] node index. */
const progressBuffer = new SharedArrayBuffer(8);
const progress = new Int32Array(progressBuffer);
/** Read by the watchdog thread: [0] when the current crossing started (epoch ms, 0 outside crossings), [1] its timeout, [2] its message's seq. */
const watchBuffer = new SharedArrayBuffer(24);
const watch = new Float64Array(watchBuffer);
const ITEMS_DONE = -2;
const progressCopy = new ivm.ExternalCopy(progressBuffer);
const clock = new ivm.Callback(() => Math.round(performance.now() * 1000));
/**
 * The ONNX port of the sandboxes: MODEL nodes of ONNX models call it synchronously, inside their crossing (so the
 * run's time limit and the watchdog cover the model call). Sessions are this process's, per model file (by sha256).
 */
let onnx = new OnnxSessions(256 * 1_048_576);
const onnxPort = new ivm.Callback((/** @type {string} */ key, /** @type {string} */ json) =>
  onnx.runJson(String(key), String(json)),
);
/** The ONNX files each program holds (released when the program is forgotten). @type {Map<number, string[]>} */
const programModels = new Map();

/**
 * A crossing that overruns its time-out (a sandbox that cannot be interrupted, e.g. collecting garbage at its
 * memory limit) cannot be stopped from this thread, which is inside it. The watchdog thread reports the item that
 * was running on fd 4 and kills the process; the pool fails that item with TIME_LIMIT_EXCEEDED and runs the
 * message's other items again elsewhere.
 */
const WATCHDOG_SOURCE = `
const { workerData } = require('node:worker_threads');
const fs = require('node:fs');
const watch = new Float64Array(workerData.watchBuffer);
const progress = new Int32Array(workerData.progressBuffer);
const nap = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  Atomics.wait(nap, 0, 0, 20);
  const started = watch[0];
  if (started > 0 && Date.now() - started > watch[1] + workerData.stuckGraceMs) {
    try { fs.writeSync(4, JSON.stringify({ seq: watch[2], culprit: progress[0], node: progress[1] }) + '\\n'); } catch {}
    process.kill(process.pid, 'SIGKILL');
  }
}
`;

/** @param {number} stuckGraceMs */
function startWatchdog(stuckGraceMs) {
  const watchdog = new Worker(WATCHDOG_SOURCE, {
    eval: true,
    workerData: { watchBuffer, progressBuffer, stuckGraceMs },
  });
  watchdog.unref();
}

/** Program sources by program id (the pool sends each once per host). @type {Map<number, string>} */
const sources = new Map();
/** Tenant sandboxes by owner id, least recently used first. @type {Map<number, Sandbox>} */
const tenants = new Map();

/** @returns {Sandbox} */
function createTenant() {
  const isolate = new ivm.Isolate({ memoryLimit: memoryMb });
  try {
    const context = isolate.createContextSync();
    const bootstrap = context.evalSync(bootstrapSource, { reference: true });
    /** @type {AnyReference} */
    const rt = bootstrap.applySync(undefined, [clock, progressCopy.copyInto(), windowMs, onnxPort], {
      result: { reference: true },
      timeout: 10_000,
    });
    bootstrap.release();
    return {
      isolate,
      context,
      rt,
      batch: rt.getSync('batch', { reference: true }),
      collected: rt.getSync('collected', { reference: true }),
      forget: rt.getSync('forget', { reference: true }),
      programs: new Set(),
    };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

/** @param {number} owner */
function tenantFor(owner) {
  const existing = tenants.get(owner);
  tenants.delete(owner);
  if (existing && !existing.isolate.isDisposed) {
    tenants.set(owner, existing);
    return existing;
  }
  for (const [oldest, sandbox] of tenants) {
    if (tenants.size < maxIsolates) break;
    tenants.delete(oldest);
    dispose(sandbox);
  }
  const created = createTenant();
  tenants.set(owner, created);
  return created;
}

/** @param {Sandbox} sandbox */
function dispose(sandbox) {
  if (!sandbox.isolate.isDisposed) sandbox.isolate.dispose();
}

/** @param {Sandbox} sandbox @param {number} pid */
function instantiate(sandbox, pid) {
  const source = sources.get(pid);
  if (source === undefined) throw new Error(`program ${pid} was not sent to this host`);
  const define = sandbox.context.evalSync(`(function (rt, id) { "use strict"; rt.define(id, (${source})(rt)); })`, {
    reference: true,
    timeout: 10_000,
  });
  try {
    define.applySync(undefined, [sandbox.rt.derefInto(), pid], { timeout: 10_000 });
  } finally {
    define.release();
  }
  sandbox.programs.add(pid);
}

/** @param {unknown} error @param {Sandbox} sandbox @returns {'memory' | 'timeout' | 'other'} */
function classify(error, sandbox) {
  const message = messageOf(error);
  if (sandbox.isolate.isDisposed || /disposed|memory limit/i.test(message)) return 'memory';
  if (/timed out/i.test(message)) return 'timeout';
  return 'other';
}

/** @param {unknown} error */
function messageOf(error) {
  return String(error instanceof Error ? error.message : error);
}

/** @type {Record<string, string>} */
const LIMIT_MESSAGES = {
  TIME_LIMIT_EXCEEDED: 'The run exceeded its CPU time limit',
  MEMORY_LIMIT_EXCEEDED: 'The run exceeded the sandbox memory limit',
};

/** What a message has produced since its last answer. @type {CrossingOutput[]} */
let outs = [];
/** @type {ItemFailure[]} */
let fails = [];

/** @param {number} i @param {LimitCode} code @param {string} [message] @param {number} [node] */
function fail(i, code, message, node = -1) {
  fails.push({ i, code, message: message ?? LIMIT_MESSAGES[code], node });
}

/**
 * Keeps the outputs of a crossing ("<count>\n<json>"); returns how many items it finished.
 * @param {number[]} queue @param {string} out @param {number} crossMs
 */
function deliver(queue, out, crossMs) {
  const cut = out.indexOf('\n');
  const count = Number(out.slice(0, cut));
  if (count > 0) outs.push({ idx: queue.slice(0, count), text: out.slice(cut + 1), crossMs });
  return count;
}

/** Sends what the message has produced so far: after each crossing, so early items are answered early. */
/** @param {number} seq @param {boolean} done @param {number[]} [requeue] */
function answer(seq, done, requeue = []) {
  if (!done && outs.length === 0 && fails.length === 0) return;
  send({ t: 'r', seq, outs, fails, requeue, done });
  outs = [];
  fails = [];
}

/** @param {RunMessage} msg */
function run(msg) {
  const { seq, owner, items, budgets, pids } = msg;
  // if the host dies from here on, this message's code is the suspect (the pool reads this after a death)
  startedBytes.writeDoubleLE(seq, 0);
  writeSync(startedFd, startedBytes, 0, 8, 0);
  const messageStarted = performance.now();
  for (const [pid, source, models] of msg.sources) {
    sources.set(pid, source);
    if (models && !programModels.has(pid)) {
      for (const [key, base64] of models) {
        onnx.add(key, base64);
        // open the session now, outside any crossing: loading the addon and the model is not the run's time
        // (a session closed later to stay within the bound is reopened inside the run that needs it)
        try {
          onnx.session(key);
        } catch {
          /* the run that calls it fails with MODEL_RUN_FAILED, naming the error */
        }
      }
      programModels.set(
        pid,
        models.map(([key]) => key),
      );
    }
  }
  let queue = items.map((_, i) => i);
  // after a crossing failed without naming its culprit, the rest go one item per crossing
  let oneByOne = false;
  while (queue.length > 0) {
    let sandbox;
    try {
      sandbox = tenantFor(owner);
    } catch (error) {
      for (const i of queue) fail(i, 'SCRIPT_ERROR', `The sandbox could not start: ${messageOf(error)}`);
      break;
    }
    const unusable = new Set();
    for (const i of queue) {
      const pid = pids[i];
      if (pid < 0 || sandbox.programs.has(pid) || unusable.has(pid)) continue;
      try {
        instantiate(sandbox, pid);
      } catch (error) {
        unusable.add(pid);
        const code = classify(error, sandbox) === 'memory' ? 'MEMORY_LIMIT_EXCEEDED' : 'SCRIPT_ERROR';
        for (const j of queue)
          if (pids[j] === pid)
            fail(
              j,
              code,
              code === 'SCRIPT_ERROR' ? `The scenario program does not load: ${messageOf(error)}` : undefined,
            );
        if (sandbox.isolate.isDisposed) break;
      }
    }
    if (unusable.size > 0) queue = queue.filter((i) => !unusable.has(pids[i]));
    if (sandbox.isolate.isDisposed || queue.length === 0) continue;

    const crossing = oneByOne ? queue.slice(0, 1) : queue;
    let budget = 1;
    for (const i of crossing) budget = Math.max(budget, budgets[i]);
    const timeout = Math.ceil(budget) + windowMs;
    const text = `[${crossing.map((i) => `[${i},${items[i]}]`).join(',')}]`;
    progress[0] = -1;
    progress[1] = -1;
    watch[1] = timeout;
    watch[0] = Date.now();
    const started = performance.now();
    let out = '';
    /** @type {unknown} */
    let error;
    try {
      out = /** @type {string} */ (sandbox.batch.applySync(undefined, [text], { timeout }));
    } catch (caught) {
      error = caught ?? new Error('crossing failed');
    }
    watch[0] = 0;
    const crossMs = performance.now() - started;
    if (!error) {
      const finished = new Set(crossing.slice(0, deliver(crossing, out, crossMs)));
      queue = queue.filter((i) => !finished.has(i));
      if (queue.length > 0 && performance.now() - messageStarted > sliceMs) {
        // a message of slow runs gives up the host after its slice: the rest queue again behind other tenants'
        // work, so one tenant's backlog (a replay of a slow scenario) cannot hold a host for all of its runs
        answer(seq, true, queue);
        return;
      }
      if (queue.length > 0) answer(seq, false);
      continue;
    }
    const culprit = progress[0];
    const node = progress[1];
    const kind = classify(error, sandbox);
    if (kind === 'memory') {
      // the isolate is gone, with whatever its other items had finished: they run again in a fresh one
      tenants.delete(owner);
      dispose(sandbox);
    } else if (kind === 'timeout') {
      // the isolate survives a time-out: keep what finished before the culprit started
      let done = 0;
      try {
        done = deliver(
          crossing,
          /** @type {string} */ (sandbox.collected.applySync(undefined, [], { timeout: 1000 })),
          crossMs,
        );
      } catch {
        done = 0;
      }
      const finished = new Set(crossing.slice(0, done));
      queue = queue.filter((i) => !finished.has(i));
      // every item finished and only their promise jobs ran on: the outputs stand
      if (culprit === ITEMS_DONE) {
        answer(seq, false);
        continue;
      }
    }
    const code =
      kind === 'memory' ? 'MEMORY_LIMIT_EXCEEDED' : kind === 'timeout' ? 'TIME_LIMIT_EXCEEDED' : 'SCRIPT_ERROR';
    const message = kind === 'other' ? `The sandbox failed: ${messageOf(error)}` : undefined;
    const blamed = culprit >= 0 ? culprit : crossing.length === 1 ? crossing[0] : -1;
    if (blamed >= 0) {
      fail(blamed, code, message, node);
      queue = queue.filter((i) => i !== blamed);
      if (kind !== 'other') {
        // a limit ends the message: the tenant's other items queue again behind other tenants' work, so N looping
        // runs never hold this host for N time limits in a row
        answer(seq, true, queue);
        return;
      }
    } else {
      oneByOne = true;
    }
    answer(seq, false);
  }
  answer(seq, true);
}

/** @param {number[]} pids */
function forget(pids) {
  for (const pid of pids) {
    sources.delete(pid);
    for (const key of programModels.get(pid) ?? []) onnx.release(key);
    programModels.delete(pid);
    for (const sandbox of tenants.values()) {
      if (!sandbox.programs.delete(pid) || sandbox.isolate.isDisposed) continue;
      try {
        sandbox.forget.applySync(undefined, [pid], { timeout: 1000 });
      } catch {
        // a sandbox that cannot even forget is replaced on its next use
      }
    }
  }
}

/** How often, at most, a host reads its resident size after messages of fast runs (ms). */
const RSS_EVERY_MS = 20;
let rssCheckedAt = -Infinity;

/** @param {InitMessage | RunMessage | ForgetMessage} msg */
function handle(msg) {
  if (msg.t === 'run') {
    watch[2] = msg.seq;
    const started = performance.now();
    run(msg);
    // reading the resident size costs ~10 µs (it reads /proc): after a message that ran a while, else at most
    // every RSS_EVERY_MS (a message of fast runs cannot grow the process much before the next check)
    const now = performance.now();
    if (retireRssMb > 0 && (now - started >= RSS_EVERY_MS || now - rssCheckedAt >= RSS_EVERY_MS)) {
      rssCheckedAt = now;
      const rssMb = process.memoryUsage.rss() / 1048576;
      if (rssMb > retireRssMb) send({ t: 'retire', rssMb: Math.round(rssMb) });
    }
  } else if (msg.t === 'forget') {
    forget(msg.pids);
  } else if (msg.t === 'init') {
    ({ bootstrapSource, memoryMb, maxIsolates, windowMs, retireRssMb, sliceMs } = msg);
    if (msg.onnxSessionsMb) onnx = new OnnxSessions(msg.onnxSessionsMb * 1_048_576);
    startedFd = openSync(msg.startedFile, 'r+');
    startWatchdog(msg.stuckGraceMs);
    send({ t: 'ready' });
  }
}

process.on('message', handle);
// the pool going away (its process ended, or closed the channel) ends this host
process.on('disconnect', () => process.exit(0));
