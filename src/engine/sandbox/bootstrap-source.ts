/**
 * Source run once in every fresh sandbox context. It keeps what the engine needs (the real Function
 * constructor, a clock, the node runner) in a closure, then locks the context down: no eval, no Function
 * constructor, no timers/wasm/shared memory, deterministic Math.random and Date, frozen intrinsics and a
 * frozen global object, so one run cannot leave anything behind for the next (or another scenario).
 * Evaluates to the `rt` object handed to every compiled scenario's factory.
 */
export const BOOTSTRAP_SOURCE = String.raw`
(function (clock) {
  "use strict";
  const RealFunction = Function;
  const RealDate = Date;
  const hasOwn = Object.prototype.hasOwnProperty;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const TAG = Symbol("engine-error");
  const MERGE = ["OVERWRITE_ALL", "OVERWRITE_NULL", "OVERWRITE_NONE", "OVERWRITE_ERROR"];

  // --- deterministic Math.random: mulberry32, seeded per run, state carried across pauses
  let rngState = 0;
  // index of the node being executed, so the host can name it when a limit ends the crossing
  let currentNode = -1;
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

  function now() { return clock(); }

  function merge(node, names, values, v, wrote) {
    const mode = node.m;
    for (let k = 0; k < names.length; k++) {
      const name = names[k];
      let value = values[k];
      if (value === undefined) value = null;
      else if (typeof value === "function" || typeof value === "symbol" || typeof value === "bigint") {
        throw err("RESULT_NOT_SERIALIZABLE", "node '" + node.id + "' set variable '" + name + "' to a " + typeof value + "; variables hold JSON data only");
      }
      const current = v[name];
      if (mode === 1) { if (current != null) continue; }
      else if (mode === 2) { if (hasOwn.call(v, name)) continue; }
      else if (mode === 3) {
        if (current != null) throw err("MERGE_CONFLICT", "node '" + node.id + "' cannot set variable '" + name + "': it is already set (mergeType OVERWRITE_ERROR)");
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
    if (node.outputs) { for (const name of node.outputs) result[name] = v[name] === undefined ? null : v[name]; }
    else { for (const name of Object.keys(v)) result[name] = v[name]; }
    return result;
  }

  function runValidators(validators, v, skip) {
    const violations = [];
    for (const check of validators) {
      if (skip && skip.indexOf(check.variable) >= 0) continue;
      let ok;
      try { ok = check.fn(v, v[check.variable]); } catch (e) {
        violations.push({ variable: check.variable, message: check.message + " (validator failed: " + describe(e) + ")" });
        continue;
      }
      if (ok !== true) violations.push({ variable: check.variable, message: check.message });
    }
    return violations;
  }

  /**
   * One crossing: runs synchronous nodes from 'at' until an END node (s: "end"), a node that needs the host
   * (s: "pause", with the request it needs), invalid inputs (s: "invalid") or an error (s: "error").
   */
  function makeEntry(nodes, validators) {
    // arguments and result cross as JSON text: far cheaper than structured-clone copies of small objects
    return function entry(json) {
      const a = parse(json);
      let out;
      try { out = stringify(step(nodes, validators, a[0], a[1], a[2], a[3], a[4], a[5])); }
      catch (e) { out = stringify({ s: "error", node: a[1], code: "RESULT_NOT_SERIALIZABLE", message: describe(e), trace: null }); }
      return out;
    };
  }

  function step(nodes, validators, v, at, resume, trace, seed, skip) {
      rngState = seed | 0;
      const tr = trace ? [] : null;
      let i = at;
      let node = nodes[i];
      try {
        if (resume === null && node.k === 0) {
          const violations = runValidators(validators, v, skip);
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
          currentNode = i;
          const t0 = tr ? now() : 0;
          const entryTrace = tr ? { nodeId: node.id, name: node.name, type: node.type, read: readValues(node, v), wrote: {}, durationMicros: 0 } : null;
          switch (node.k) {
            case 0: i = node.next; break;
            case 1: {
              const result = selectResult(node, v);
              if (tr) { entryTrace.durationMicros = now() - t0; tr.push(entryTrace); }
              return { s: "end", node: i, result: result, trace: tr, seed: rngState };
            }
            case 3: {
              const b = node.exec(v);
              if (typeof b !== "boolean") throw err("DECISION_NOT_BOOLEAN", "condition of decision '" + node.id + "' returned " + (b === null ? "null" : typeof b) + ", not a boolean");
              if (entryTrace) entryTrace.branch = b;
              i = b ? node.t : node.f;
              break;
            }
            case 6: case 7: case 8: {
              const request = node.exec(v);
              return { s: "pause", node: i, request: request, state: v, trace: tr, seed: rngState };
            }
            default: {
              const info = entryTrace ? {} : null;
              const values = node.exec(v, info);
              merge(node, node.defs, values, v, entryTrace ? entryTrace.wrote : null);
              if (info && info.m) entryTrace.matchedRules = info.m;
              i = node.next;
            }
          }
          if (tr) { entryTrace.durationMicros = now() - t0; tr.push(entryTrace); }
          node = nodes[i];
        }
      } catch (e) {
        const code = e && typeof e === "object" && hasOwn.call(e, TAG) ? e[TAG] : "SCRIPT_ERROR";
        return { s: "error", node: i, code: code, message: describe(e), trace: tr };
      }
  }

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
      return { ok: true, value: value === true, description: value === true ? "" : "expression returned " + (value === undefined ? "undefined" : JSON.stringify(value)) };
    } catch (e) { return { ok: false, value: false, description: describe(e) }; }
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

  return Object.freeze({ F: RealFunction, err: err, makeEntry: makeEntry, evalTest: evalTest, lastNode: function () { return currentNode; } });
})
`;
