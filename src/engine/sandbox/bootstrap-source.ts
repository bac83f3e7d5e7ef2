/**
 * Source run once in every fresh sandbox context (one context per tenant per engine host, see
 * src/engine/pool/engine-host.mjs). It keeps what the runtime needs (the real Function constructor
 * and Date, the program registry, the progress cells) in a closure that scenario code cannot reach,
 * then locks the context down so that nothing a run can touch outlives the run:
 * - no eval, Function constructor, timers, WebAssembly, shared memory, Atomics, weak references;
 * - no clock: Date.now(), new Date() and Intl date formatting without a date are refused;
 * - no RegExp legacy statics (RegExp.input, lastMatch, $1…): they would carry the last match from run to run;
 * - every intrinsic and the global object deep-frozen;
 * - scenario functions are always called with `this` undefined (strict mode), never as methods;
 * - Math.random is a PRNG seeded by the host for every run.
 *
 * Evaluates to `function (clock, progressBuffer, windowMs, onnxPort) → rt`, where `clock` is a host callback in
 * microseconds (trace durations only), `progressBuffer` a SharedArrayBuffer the worker reads after a
 * crossing was cut short (which item and which node were running), `windowMs` how long one crossing
 * keeps starting new items, and `onnxPort` the host's synchronous callback that runs an ONNX model
 * (`(sha256, json) → json`, src/engine/pool/onnx-sessions.mjs; absent where nothing runs, as in the
 * program checker). Only the runtime calls it (scoreModels, for runs stopped at an ONNX MODEL node); neither
 * scenario code nor generated node code can reach it.
 */
export const BOOTSTRAP_SOURCE = String.raw`
(function (clock, progressBuffer, windowMs, onnxPort) {
  "use strict";
  const RealFunction = Function;
  const RealDate = Date;
  const realNow = Date.now;
  const hasOwn = Object.prototype.hasOwnProperty;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const TAG = Symbol("engine-error");
  // [0] message index of the item running, -2 once the crossing's items are all done; [1] node index
  const progress = new Int32Array(progressBuffer);
  const ITEMS_DONE = -2;

  // --- what one step hands back (its result, or the state a pause carries, and its trace) is at most this
  // many characters of JSON: measured before it is written, so a run that builds a huge value fails at once
  // (RESULT_TOO_LARGE) instead of spending its time limit and the host's memory on copying it out.
  const MAX_OUTPUT_CHARS = 8 * 1024 * 1024;
  const isArray = Array.isArray;
  const keysOf = Object.keys;
  /** Whether writing value as JSON would take more than limit characters (a close upper bound, never stringified). */
  function largerThan(value, limit) {
    let size = 0;
    const stack = [value];
    while (stack.length > 0) {
      const v = stack.pop();
      if (typeof v === "string") size += v.length + 2;
      else if (v === null || typeof v !== "object") size += 24;
      else if (isArray(v)) { size += v.length + 2; for (let i = 0; i < v.length; i++) stack.push(v[i]); }
      else { const keys = keysOf(v); size += 2; for (let i = 0; i < keys.length; i++) { size += keys[i].length + 4; stack.push(v[keys[i]]); } }
      if (size > limit) return true;
    }
    return false;
  }

  // --- deterministic Math.random: mulberry32, seeded per run, state carried across pauses
  let rngState = 0;
  function random() {
    rngState = (rngState + 0x6D2B79F5) | 0;
    let t = rngState;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  function err(code, message) { const e = new Error(message); e[TAG] = code; return e; }

  function describe(e) {
    try {
      if (e && typeof e === "object" && typeof e.message === "string") return (typeof e.name === "string" ? e.name + ": " : "") + e.message;
      return "Uncaught " + String(e);
    } catch (x) { return "Uncaught exception"; }
  }

  function merge(node, names, values, v, wrote) {
    const mode = node.m;
    for (let k = 0; k < names.length; k++) {
      const name = names[k];
      let value = values[k];
      if (value === undefined) value = null;
      else if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
        throw err("RESULT_NOT_SERIALIZABLE", "node '" + node.id + "' set variable '" + name + "' to a " + typeof value + "; variables hold JSON data only");
      }
      if (mode !== 0) {
        const current = v[name];
        if (mode === 1) { if (current != null) continue; }
        else if (mode === 2) { if (hasOwn.call(v, name)) continue; }
        else if (current != null) throw err("MERGE_CONFLICT", "node '" + node.id + "' cannot set variable '" + name + "': it is already set (mergeType OVERWRITE_ERROR)");
      }
      v[name] = value;
      if (wrote) wrote[name] = value;
    }
  }

  function readValues(node, v) {
    const read = {};
    for (const name of node.reads) read[name] = v[name] === undefined ? null : v[name];
    return read;
  }

  function selectResult(node, v) {
    const result = {};
    const outputs = node.outputs;
    if (outputs) { for (let k = 0; k < outputs.length; k++) { const name = outputs[k]; const value = v[name]; result[name] = value === undefined ? null : value; } }
    else { for (const name of Object.keys(v)) result[name] = v[name]; }
    return result;
  }

  function runValidators(validators, v, skip) {
    const violations = [];
    for (const check of validators) {
      if (skip && skip.indexOf(check.variable) >= 0) continue;
      const fn = check.fn;
      let ok;
      try { ok = fn(v, v[check.variable]); } catch (e) {
        violations.push({ variable: check.variable, message: check.message + " (validator failed: " + describe(e) + ")" });
        continue;
      }
      if (ok !== true) violations.push({ variable: check.variable, message: check.message });
    }
    return violations;
  }

  /**
   * One step of a run: executes synchronous nodes from 'at' until an END node (s: "end"), a node that needs the
   * host (s: "pause", with the request it needs), invalid inputs (s: "invalid") or an error (s: "error"); or an
   * ONNX MODEL node (s: "model": its row's tensor values, the run's state kept in the sandbox), which the crossing
   * scores together with the other runs that reached one (see batch) and resumes with "carried" (the trace so far).
   */
  function step(program, v, at, resume, trace, seed, skip, carried) {
    const nodes = program.nodes;
    rngState = seed | 0;
    const tr = carried ? carried : trace ? [] : null;
    let i = at;
    let node = nodes[i];
    try {
      if (resume === null && node.k === 0) {
        const violations = runValidators(program.validators, v, skip);
        if (violations.length > 0 || skip) return { s: "invalid", violations: violations };
      }
      if (resume !== null) {
        const wrote = tr ? {} : null;
        const names = resume.names ? resume.names.map((n) => node.prefix + n) : node.defs;
        merge(node, names, resume.values, v, wrote);
        if (tr) tr.push({ nodeId: node.id, name: node.name, type: node.type, read: resume.read, wrote: wrote, durationMicros: resume.micros });
        i = node.next; node = nodes[i];
      }
      for (;;) {
        progress[1] = i;
        const t0 = tr ? clock() : 0;
        const entryTrace = tr ? { nodeId: node.id, name: node.name, type: node.type, read: readValues(node, v), wrote: {}, durationMicros: 0 } : null;
        // exec is always called as a plain function: scenario code sees this === undefined, never the node
        const exec = node.exec;
        switch (node.k) {
          case 0: i = node.next; break;
          case 1: {
            const result = selectResult(node, v);
            if (tr) { entryTrace.durationMicros = clock() - t0; tr.push(entryTrace); }
            // the caller reads an end's result and trace only: no node, seed or null trace to write, copy and parse
            return tr ? { s: "end", result: result, trace: tr } : { s: "end", result: result };
          }
          case 3: {
            const b = exec(v);
            if (typeof b !== "boolean") throw err("DECISION_NOT_BOOLEAN", "condition of decision '" + node.id + "' returned " + (b === null ? "null" : typeof b) + ", not a boolean");
            if (entryTrace) entryTrace.branch = b;
            i = b ? node.t : node.f;
            break;
          }
          case 6: case 7: case 8: {
            const request = exec(v);
            return { s: "pause", node: i, request: request, state: v, trace: tr, seed: rngState };
          }
          case 10: {
            const feeds = exec.prep(v);
            return { s: "model", node: i, model: exec, feeds: feeds, v: v, trace: tr, seed: rngState, read: entryTrace ? entryTrace.read : null, micros: tr ? clock() - t0 : 0 };
          }
          default: {
            const info = entryTrace ? {} : null;
            const values = exec(v, info);
            merge(node, node.defs, values, v, entryTrace ? entryTrace.wrote : null);
            if (info && info.m) entryTrace.matchedRules = info.m;
            i = node.next;
          }
        }
        if (tr) { entryTrace.durationMicros = clock() - t0; tr.push(entryTrace); }
        node = nodes[i];
      }
    } catch (e) {
      const code = e && typeof e === "object" && hasOwn.call(e, TAG) ? e[TAG] : "SCRIPT_ERROR";
      return { s: "error", node: i, code: code, message: describe(e), trace: tr };
    }
  }

  // Test expressions of the tenant's scenarios, compiled once per isolate (never reachable from scenario code).
  const testCache = new Map();
  function evalTest(code, result) {
    const names = Object.keys(result).filter((n) => /^[A-Za-z_$][\w$]*$/.test(n) && n !== "result");
    const key = names.join(",") + "\u0000" + code;
    let fn = testCache.get(key);
    try {
      if (!fn) {
        fn = RealFunction(...names, "result", '"use strict";\nreturn (\n' + code + "\n);");
        if (testCache.size > 500) testCache.clear();
        testCache.set(key, fn);
      }
      const value = fn(...names.map((n) => result[n]), result);
      return { ok: true, value: value === true, description: value === true ? "" : "expression returned " + (value === undefined ? "undefined" : stringify(value)) };
    } catch (e) { return { ok: false, value: false, description: describe(e) }; }
  }

  // --- ONNX models, run by the host (outside the isolate) inside this crossing: the run's time limit covers them.
  // The runs of a crossing that reached an ONNX MODEL node (step answered s: "model") are scored together, one
  // call per model and output list, their rows stacked along the batch dimension; then each resumes at its node.
  function scoreModels(pending, items, spent) {
    const groups = new Map();
    for (const p of pending) {
      const id = p.res.model.single ? "#" + p.k : p.res.model.key + "\u0000" + p.res.model.fetch.join("\u0000");
      let group = groups.get(id);
      if (!group) groups.set(id, (group = []));
      group.push(p);
    }
    const next = [];
    for (const group of groups.values()) {
      const model = group[0].res.model;
      const n = group.length;
      const feeds = [];
      for (let j = 0; j < group[0].res.feeds.length; j++) {
        const column = [];
        for (const p of group) { const f = p.res.feeds[j]; for (let x = 0; x < f.length; x++) column.push(f[x]); }
        feeds.push(column);
      }
      progress[0] = items[group[0].k][0];
      progress[1] = group[0].res.node;
      const t0 = realNow();
      const c0 = clock();
      let answer;
      try {
        answer = typeof onnxPort === "function" ? parse(onnxPort(model.key, stringify({ rows: n, feeds: feeds, fetch: model.fetch }))) : { error: "no ONNX runtime here" };
      } catch (e) { answer = { error: describe(e) }; }
      const share = (realNow() - t0) / n;
      const microsShare = (clock() - c0) / n;
      for (let r = 0; r < n; r++) {
        const p = group[r];
        const res = p.res;
        const item = items[p.k];
        spent[p.k] += share;
        progress[0] = item[0];
        const t1 = realNow();
        let output;
        if (answer.error !== undefined) {
          const node = item[1] === 1 ? null : programs.get(item[2]).nodes[res.node];
          output = { s: "error", node: res.node, code: "MODEL_RUN_FAILED", message: "node '" + (node ? node.id : "?") + "': ONNX Runtime failed: " + answer.error, trace: res.trace };
        } else {
          const values = [];
          for (let f = 0; f < answer.ok.length; f++) {
            const all = answer.ok[f];
            const size = all.length / n;
            values.push(size === 1 ? all[r] : all.slice(r * size, (r + 1) * size));
          }
          output = step(programs.get(item[2]), res.v, res.node, { values: values, read: res.read, micros: Math.round(res.micros + microsShare) }, item[3][3], res.seed, null, res.trace);
        }
        spent[p.k] += realNow() - t1;
        if (output.s === "model") next.push({ k: p.k, res: output });
        else p.done(output);
      }
    }
    return next;
  }

  // --- programs of this tenant (compiled scenario versions), by host program id
  const programs = new Map();
  function define(id, program) { programs.set(id, program); }
  function forget(id) { programs.delete(id); }

  function runItem(item) {
    if (item[1] === 1) return evalTest(item[2], item[3]);
    const program = programs.get(item[2]);
    const a = item[3];
    return step(program, a[0], a[1], a[2], a[3], a[4], a[5]);
  }

  // Output of the current crossing, kept so the worker can salvage finished items when a later one is cut short.
  const outputs = [];
  const millis = [];
  function collected() { return outputs.length + "\n[[" + outputs.join(",") + "],[" + millis.join(",") + "]]"; }

  /**
   * One crossing for many items ([messageIndex, kind, programId | testCode, args | result], …), each isolated by
   * try/catch. Items start only within the first windowMs of the crossing, so every item that starts has (nearly)
   * its whole time limit; the rest are handed back. Answers "<items done>\n[[outputs…],[milliseconds…]]".
   */
  function textOf(output) {
    try {
      return largerThan(output, MAX_OUTPUT_CHARS)
        ? stringify({ s: "error", node: progress[1], code: "RESULT_TOO_LARGE", message: "the run's values take more than " + MAX_OUTPUT_CHARS + " characters of JSON", trace: null })
        : stringify(output);
    } catch (e) { return stringify({ s: "error", node: progress[1], code: "RESULT_NOT_SERIALIZABLE", message: describe(e), trace: null }); }
  }

  function batch(json) {
    const items = parse(json);
    outputs.length = 0;
    millis.length = 0;
    const started = realNow();
    // outputs are handed back in item order, a finished prefix at a time (collected() salvages it after a time-out):
    // an item waiting for its ONNX model holds back the items after it until the crossing has scored the model
    const texts = [];
    const spent = [];
    let pending = [];
    const flush = () => { while (outputs.length < texts.length && texts[outputs.length] !== undefined) { millis.push(spent[outputs.length]); outputs.push(texts[outputs.length]); } };
    const finisher = (k) => (output) => { texts[k] = textOf(output); };
    for (let k = 0; k < items.length; k++) {
      const t0 = realNow();
      if (k > 0 && t0 - started > windowMs) break;
      const item = items[k];
      progress[0] = item[0];
      progress[1] = -1;
      texts.push(undefined);
      spent.push(0);
      let output;
      try { output = runItem(item); }
      catch (e) { output = { s: "error", node: progress[1], code: "RESULT_NOT_SERIALIZABLE", message: describe(e), trace: null }; }
      if (output && output.s === "model") pending.push({ k: k, res: output, done: finisher(k) });
      else texts[k] = textOf(output);
      spent[k] += realNow() - t0;
      if (pending.length === 0) flush();
    }
    while (pending.length > 0) {
      const next = scoreModels(pending, items, spent);
      for (const p of next) p.done = finisher(p.k);
      pending = next;
    }
    flush();
    progress[0] = ITEMS_DONE;
    return collected();
  }

  // --- lockdown
  const SafeDate = function Date(...args) {
    if (!new.target) throw new TypeError("Date() is not available: runs are deterministic, pass the date as an input");
    if (args.length === 0) throw new TypeError("new Date() without arguments is not available: runs are deterministic, pass the date as an input");
    return Reflect.construct(RealDate, args, new.target);
  };
  SafeDate.prototype = RealDate.prototype;
  SafeDate.UTC = RealDate.UTC;
  SafeDate.parse = RealDate.parse;
  SafeDate.now = function now() { throw new TypeError("Date.now() is not available: runs are deterministic, pass the date as an input"); };
  Object.defineProperty(RealDate.prototype, "constructor", { value: SafeDate });
  globalThis.Date = SafeDate;
  Math.random = random;

  // Intl formats the current time when given no date: the same refusal as new Date().
  const noClock = (what) => new TypeError(what + " without a date is not available: runs are deterministic, pass the date as an input");
  const DateTimeFormat = Intl.DateTimeFormat;
  const formatGetter = Object.getOwnPropertyDescriptor(DateTimeFormat.prototype, "format").get;
  Object.defineProperty(DateTimeFormat.prototype, "format", {
    configurable: true,
    get() {
      const bound = formatGetter.call(this);
      return function format(date) {
        if (date === undefined) throw noClock("Intl.DateTimeFormat#format");
        return bound(date);
      };
    },
  });
  for (const name of ["formatToParts", "formatRange", "formatRangeToParts"]) {
    const original = DateTimeFormat.prototype[name];
    if (typeof original !== "function") continue;
    const guarded = { [name](...args) {
      if (args.length === 0 || args[0] === undefined || (name !== "formatToParts" && args[1] === undefined)) throw noClock("Intl.DateTimeFormat#" + name);
      return Reflect.apply(original, this, args);
    } }[name];
    Object.defineProperty(DateTimeFormat.prototype, name, { value: guarded, writable: true, configurable: true });
  }

  // RegExp's legacy statics hold the last successful match of the whole context: gone, so no run sees another's.
  for (const name of Object.getOwnPropertyNames(RegExp)) {
    if (name === "length" || name === "name" || name === "prototype") continue;
    delete RegExp[name];
  }

  // Huge contiguous arrays abort the whole process inside V8 (a single allocation above the heap limit is fatal,
  // not a catchable isolate disposal), so every way to densify an array of a given length is capped.
  const MAX_ARRAY_LENGTH = 1e7;
  const tooLong = (n) => typeof n === "number" && n > MAX_ARRAY_LENGTH;
  const arrayTooLong = () => err("MEMORY_LIMIT_EXCEEDED", "RangeError: arrays longer than " + MAX_ARRAY_LENGTH + " elements are not allowed in scenarios");
  const RealArray = Array;
  const SafeArray = function Array(...args) {
    if (args.length === 1 && tooLong(args[0])) throw arrayTooLong();
    return Reflect.construct(RealArray, args, new.target || SafeArray);
  };
  SafeArray.prototype = RealArray.prototype;
  SafeArray.from = RealArray.from;
  SafeArray.of = RealArray.of;
  SafeArray.isArray = RealArray.isArray;
  Object.defineProperty(SafeArray, Symbol.species, { get() { return this; } });
  Object.defineProperty(RealArray.prototype, "constructor", { value: SafeArray, writable: true, configurable: true });
  for (const name of ["fill", "toReversed", "toSorted", "toSpliced", "with", "copyWithin"]) {
    const original = RealArray.prototype[name];
    if (typeof original !== "function") continue;
    const guarded = { [name](...args) { if (this != null && tooLong(this.length)) throw arrayTooLong(); return Reflect.apply(original, this, args); } }[name];
    Object.defineProperty(RealArray.prototype, name, { value: guarded, writable: true, configurable: true });
  }
  globalThis.Array = SafeArray;

  const forbidden = function () { throw new TypeError("Code generation from strings is not allowed in scenarios"); };
  for (const fn of [function () {}, async function () {}, function* () {}, async function* () {}]) {
    const proto = Object.getPrototypeOf(fn);
    Object.defineProperty(proto, "constructor", { value: forbidden });
  }
  forbidden.prototype = RealFunction.prototype;
  globalThis.Function = forbidden;
  for (const name of ["eval", "console", "WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "WeakRef"]) {
    delete globalThis[name];
  }

  const seen = new Set();
  function deepFreeze(value) {
    if ((typeof value !== "object" && typeof value !== "function") || value === null || seen.has(value)) return;
    seen.add(value);
    Object.freeze(value);
    for (const key of Reflect.ownKeys(value)) {
      const d = Object.getOwnPropertyDescriptor(value, key);
      if (!d) continue;
      if ("value" in d) deepFreeze(d.value);
      else { deepFreeze(d.get); deepFreeze(d.set); }
    }
    deepFreeze(Object.getPrototypeOf(value));
  }
  deepFreeze(globalThis);
  // intrinsics not reachable from globalThis by name
  for (const fn of [function () {}, async function () {}, function* () {}, async function* () {}]) deepFreeze(Object.getPrototypeOf(fn));
  deepFreeze(Object.getPrototypeOf([][Symbol.iterator]()));
  deepFreeze(Object.getPrototypeOf(new Map().entries()));
  deepFreeze(Object.getPrototypeOf(new Set().values()));
  deepFreeze(Object.getPrototypeOf(""[Symbol.iterator]()));
  deepFreeze(Object.getPrototypeOf(/a/[Symbol.matchAll]("")));
  deepFreeze(Object.getPrototypeOf(new Intl.Segmenter().segment("")));
  deepFreeze(Object.getPrototypeOf(new Intl.Segmenter().segment("")[Symbol.iterator]()));

  return Object.freeze({
    F: RealFunction, err: err, define: define, forget: forget, batch: batch, collected: collected,
  });
})
`;
