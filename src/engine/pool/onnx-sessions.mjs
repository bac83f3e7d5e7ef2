// @ts-check
/**
 * ONNX models through ONNX Runtime (onnxruntime-node, CPU), for the processes that may load the native addon: the
 * engine hosts (engine-host.mjs, where runs call it as a port of the sandbox) and the upload inspector
 * (onnx-inspect.mjs, a child process of the API). Never loaded in the API's or the worker's own process: a hostile
 * file may crash the addon, and the process that parses it must not be the one serving requests.
 *
 * Sessions are created and run through the addon's synchronous binding (the package's public `InferenceSession`
 * wraps the same calls in a promise resolved on setImmediate): a MODEL node calls the model inside the sandbox's
 * synchronous crossing, so the call counts against the run's time limit like the node's own code.
 *
 * Plain JavaScript, like the host: no TypeScript transform needed under node, tsx or jest.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** @typedef {'float32' | 'float64' | 'int64' | 'string'} ElementType */
/** @typedef {{ name: string, elementType: ElementType, shape: (number | string)[] }} TensorInfo */
/** @typedef {{ name: string, reason: string }} Skipped */
/** @typedef {{ inputs: TensorInfo[], outputs: TensorInfo[], skippedOutputs: Skipped[] }} OnnxDescription */

/** The element types a MODEL node maps: variables are JSON numbers and strings. */
export const ELEMENT_TYPES = ['float32', 'float64', 'int64', 'string'];
/** The binding's type codes (onnxruntime-node dist/backend.js). */
const TYPE_NAMES = [
  undefined,
  'float32',
  'uint8',
  'int8',
  'uint16',
  'int16',
  'int32',
  'int64',
  'string',
  'bool',
  'float16',
  'float64',
  'uint32',
  'uint64',
];
const SESSION_OPTIONS = {
  executionProviders: ['cpu'],
  graphOptimizationLevel: 'all',
  intraOpNumThreads: 1,
  interOpNumThreads: 1,
  executionMode: 'sequential',
  enableCpuMemArena: false,
};

/** @type {{ binding: any, Tensor: any } | undefined} */
let ort;
function runtime() {
  if (!ort) {
    const { binding, initOrt } = require('onnxruntime-node/dist/binding');
    initOrt();
    ort = { binding, Tensor: require('onnxruntime-node').Tensor };
  }
  return ort;
}

/** A refusal of a model file: 'invalid' (400: not a model the runtime can read) or 'unsupported' (422). */
export class OnnxModelError extends Error {
  /** @param {'invalid' | 'unsupported'} kind @param {string} message @param {string} path */
  constructor(kind, message, path) {
    super(message);
    this.kind = kind;
    this.path = path;
  }
}

/** @param {Buffer} bytes */
function load(bytes) {
  const { binding } = runtime();
  const session = new binding.InferenceSession();
  session.loadModel(bytes.buffer, bytes.byteOffset, bytes.byteLength, SESSION_OPTIONS);
  return session;
}

/** What the runtime said when it refused a file: an operator or opset it does not have is 422, the rest 400. */
/** @param {unknown} error */
function refusal(error) {
  const message = String(error instanceof Error ? error.message : error);
  if (
    /opset|not a registered function|Could not find an implementation|NOT_IMPLEMENTED|not supported|No Op registered|domain_to_version/i.test(
      message,
    )
  ) {
    return new OnnxModelError('unsupported', `ONNX Runtime cannot run the model: ${message}`, 'graph');
  }
  return new OnnxModelError('invalid', `ONNX Runtime cannot load the file: ${message}`, 'file');
}

/**
 * Loads the model and reads its graph inputs and outputs. Refuses (OnnxModelError) a file the runtime cannot load,
 * and what a MODEL node cannot map: an input or output of another element type, an input whose first dimension is
 * not the batch (symbolic or 1) or whose other dimensions are not fixed, no tensor output at all. Outputs that are
 * not tensors (a ZipMap's sequence of maps) are left out and named in `skippedOutputs`.
 * @param {Buffer} bytes @returns {OnnxDescription}
 */
export function describeOnnx(bytes) {
  let session;
  try {
    session = load(bytes);
  } catch (error) {
    throw refusal(error);
  }
  try {
    /** @type {TensorInfo[]} */
    const inputs = [];
    for (const m of session.inputMetadata) {
      const path = `graph.input.${m.name}`;
      if (!m.isTensor)
        throw new OnnxModelError(
          'unsupported',
          `input "${m.name}" is not a tensor: a MODEL node maps variables to tensors only`,
          path,
        );
      const info = tensorInfo(m, path);
      if (info.shape.length === 0)
        throw new OnnxModelError(
          'unsupported',
          `input "${m.name}" is a scalar: its first dimension must be the batch (symbolic or 1)`,
          path,
        );
      if (typeof info.shape[0] === 'number' && info.shape[0] !== 1) {
        throw new OnnxModelError(
          'unsupported',
          `input "${m.name}" has a fixed first dimension of ${info.shape[0]}: it must be the batch (symbolic or 1)`,
          path,
        );
      }
      const inner = info.shape.slice(1);
      if (inner.some((d) => typeof d !== 'number' || d < 1)) {
        throw new OnnxModelError(
          'unsupported',
          `input "${m.name}" has shape [${info.shape.join(', ')}]: every dimension after the batch must be fixed`,
          path,
        );
      }
      if (inner.reduce((/** @type {number} */ n, d) => n * Number(d), 1) > 100_000)
        throw new OnnxModelError('unsupported', `input "${m.name}" takes more than 100,000 values per row`, path);
      inputs.push(info);
    }
    /** @type {TensorInfo[]} */
    const outputs = [];
    /** @type {Skipped[]} */
    const skippedOutputs = [];
    for (const m of session.outputMetadata) {
      if (!m.isTensor) {
        skippedOutputs.push({
          name: m.name,
          reason: "not a tensor (e.g. a ZipMap's sequence of maps): ONNX Runtime for Node returns tensors only",
        });
        continue;
      }
      outputs.push(tensorInfo(m, `graph.output.${m.name}`));
    }
    if (inputs.length === 0) throw new OnnxModelError('unsupported', 'the model has no inputs', 'graph.input');
    if (outputs.length === 0) throw new OnnxModelError('unsupported', 'the model has no tensor output', 'graph.output');
    return { inputs, outputs, skippedOutputs };
  } finally {
    session.dispose?.();
  }
}

/** @param {any} m @param {string} path @returns {TensorInfo} */
function tensorInfo(m, path) {
  const elementType = TYPE_NAMES[m.type];
  if (!elementType || !ELEMENT_TYPES.includes(elementType)) {
    throw new OnnxModelError(
      'unsupported',
      `"${m.name}" holds ${elementType ?? `type ${m.type}`} elements: MODEL nodes map ${ELEMENT_TYPES.join(', ')}`,
      path,
    );
  }
  /** @type {(number | string)[]} */
  const shape = [];
  for (let i = 0; i < m.shape.length; i++) shape.push(m.shape[i] >= 0 ? m.shape[i] : m.symbolicDimensions[i] || '?');
  return { name: m.name, elementType: /** @type {ElementType} */ (elementType), shape };
}

/**
 * The sessions of one process, by the sha256 of their model file: files arrive with the programs that use them
 * (add/release count the programs), sessions are created on first use and kept while the model files of the open
 * sessions take at most `maxBytes` (least recently used closed first; reopened from the file when used again).
 */
export class OnnxSessions {
  /** @param {number} maxBytes */
  constructor(maxBytes) {
    this.maxBytes = maxBytes;
    /** @type {Map<string, { bytes: Buffer, users: number }>} */
    this.files = new Map();
    /** Open sessions, least recently used first. @type {Map<string, { session: any, size: number, inputs: TensorInfo[] }>} */
    this.sessions = new Map();
    this.openBytes = 0;
  }

  /** @param {string} key @param {string} base64 */
  add(key, base64) {
    const file = this.files.get(key);
    if (file) file.users++;
    else this.files.set(key, { bytes: Buffer.from(base64, 'base64'), users: 1 });
  }

  /** @param {string} key */
  release(key) {
    const file = this.files.get(key);
    if (!file || --file.users > 0) return;
    this.files.delete(key);
    this.close(key);
  }

  /** @param {string} key */
  close(key) {
    const open = this.sessions.get(key);
    if (!open) return;
    this.sessions.delete(key);
    this.openBytes -= open.size;
    try {
      open.session.dispose?.();
    } catch {
      /* a session that cannot be closed is dropped all the same */
    }
  }

  /** @param {string} key */
  session(key) {
    const open = this.sessions.get(key);
    if (open) {
      this.sessions.delete(key);
      this.sessions.set(key, open);
      return open;
    }
    const file = this.files.get(key);
    if (!file) throw new Error(`model ${key} was not sent to this host`);
    for (const oldest of this.sessions.keys()) {
      if (this.openBytes + file.bytes.length <= this.maxBytes) break;
      this.close(oldest);
    }
    const session = load(file.bytes);
    /** @type {TensorInfo[]} */
    const inputs = session.inputMetadata.map((/** @type {any} */ m) => tensorInfo(m, m.name));
    const created = { session, size: file.bytes.length, inputs };
    this.sessions.set(key, created);
    this.openBytes += created.size;
    return created;
  }

  /**
   * run() for the sandbox: `json` is `{ rows, feeds, fetch }`; answers `{ ok: values }` or `{ error: message }`
   * (JSON text: what crosses into the isolate).
   * @param {string} key @param {string} json @returns {string}
   */
  runJson(key, json) {
    try {
      const { rows, feeds, fetch } = /** @type {{ rows: number, feeds: unknown[][], fetch: string[] }} */ (
        JSON.parse(json)
      );
      return JSON.stringify({ ok: this.run(key, rows, feeds, fetch) });
    } catch (error) {
      return JSON.stringify({ error: String(error instanceof Error ? error.message : error) });
    }
  }

  /**
   * Scores `rows` rows at once: `feeds[k]` holds input k's values for every row, flat, row after row (null for a
   * missing float: NaN); answers for each name of `fetch` its values, flat, row after row (int64 as numbers; a NaN
   * or infinite output is null once it has crossed back as JSON).
   * @param {string} key @param {number} rows @param {unknown[][]} feeds @param {string[]} fetch
   */
  run(key, rows, feeds, fetch) {
    const { Tensor } = runtime();
    const open = this.session(key);
    /** @type {Record<string, any>} */
    const tensors = {};
    open.inputs.forEach((input, k) => {
      const dims = [rows, ...input.shape.slice(1).map(Number)];
      const values = feeds[k];
      let data;
      switch (input.elementType) {
        // a missing value is NaN in the sandbox and null once it has crossed as JSON: NaN again here
        case 'float32':
          data = Float32Array.from(/** @type {(number | null)[]} */ (values), (v) => (v === null ? NaN : v));
          break;
        case 'float64':
          data = Float64Array.from(/** @type {(number | null)[]} */ (values), (v) => (v === null ? NaN : v));
          break;
        case 'int64':
          data = BigInt64Array.from(/** @type {number[]} */ (values), (v) => BigInt(v));
          break;
        default:
          data = values;
      }
      tensors[input.name] = new Tensor(input.elementType, data, dims);
    });
    /** @type {Record<string, null>} */
    const fetches = {};
    for (const name of fetch) fetches[name] = null;
    const results = open.session.run(tensors, fetches, {});
    return fetch.map((name) => {
      const data = results[name].data;
      return data instanceof BigInt64Array ? Array.from(data, Number) : Array.from(data);
    });
  }
}
