import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { ModelFileError, onnxDocument, readPmml, type ModelDocument } from '../engine/index.js';
import type { ModelsConfig } from '../config/config.js';
import { BadRequestError } from '../errors/bad-request-error.js';
import { ConflictError } from '../errors/conflict-error.js';
import { NotFoundError } from '../errors/not-found-error.js';
import { PayloadTooLargeError } from '../errors/payload-too-large-error.js';
import { UnprocessableError } from '../errors/unprocessable-error.js';
import type { ModelFormat, ModelStore, ModelVersionRecord } from './model-store-type.js';
import type { ModelUsage } from './model-usage.js';
import { ChildProcessOnnxInspector, type OnnxInspector } from './onnx-inspector.js';

export interface ModelVersionView {
  name: string;
  version: number;
  format: ModelFormat;
  modelType: string;
  functionName: 'regression' | 'classification';
  target?: string;
  fileName: string;
  sizeBytes: number;
  sha256: string;
  createdAt: string;
  inputs: ModelDocument['inputs'];
  outputs: ModelDocument['outputs'];
}
interface ModelVersionSummaryView {
  version: number;
  modelType: string;
  functionName: 'regression' | 'classification';
  fileName: string;
  sizeBytes: number;
  createdAt: string;
}
export interface ModelSummaryView {
  name: string;
  latestVersion: number;
  versions: ModelVersionSummaryView[];
}

const PMML_EXTENSIONS = /\.(pmml|xml)$/i;
const ONNX_EXTENSION = /\.onnx$/i;

/** The model registry's rules: per-owner models, immutable versions, files checked in full before anything is stored. */
export class ModelService {
  private readonly onnx: OnnxInspector;

  constructor(
    private readonly store: ModelStore,
    private readonly usage: ModelUsage,
    private readonly config: ModelsConfig,
    onnx?: OnnxInspector,
  ) {
    this.onnx = onnx ?? new ChildProcessOnnxInspector(config.onnxLoadMs ?? 20_000);
  }

  async upload(
    ownerId: number,
    name: string,
    file: { path: string; originalName: string; size: number },
  ): Promise<ModelVersionView> {
    if (file.size > this.config.maxBytes) {
      throw new PayloadTooLargeError(
        `The model file is ${file.size} bytes; at most ${this.config.maxBytes} (MODEL_MAX_BYTES) are accepted.`,
      );
    }
    if (ONNX_EXTENSION.test(file.originalName)) return this.uploadOnnx(ownerId, name, file);
    if (!PMML_EXTENSIONS.test(file.originalName)) {
      throw new BadRequestError(
        `"${file.originalName}" is not a model file: send a PMML (.pmml or .xml) or ONNX (.onnx) file.`,
        'MODEL_INVALID',
        [{ path: 'body.file', message: 'the file name must end in .pmml, .xml or .onnx' }],
      );
    }
    const bytes = await readFile(file.path);
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new BadRequestError('The model file is not UTF-8 text.', 'MODEL_INVALID', [
        { path: 'body.file', message: 'not UTF-8' },
      ]);
    }
    const document = readModel(text);
    const record = await this.store.insertVersion(ownerId, name, {
      format: 'PMML',
      modelType: document.modelType,
      functionName: document.functionName,
      fileName: file.originalName,
      sizeBytes: bytes.length,
      sha256: createHash('sha256').update(bytes).digest('hex'),
      file: bytes,
      document,
    });
    return versionView(record, document);
  }

  /**
   * An ONNX file is loaded by ONNX Runtime before anything is stored, in a child process (OnnxInspector): a file the
   * runtime cannot load (truncated, not ONNX, a crash or hang of the addon) is 400, one it loads but cannot run (an
   * operator or opset it does not have) or whose tensors a MODEL node cannot map is 422.
   */
  private async uploadOnnx(
    ownerId: number,
    name: string,
    file: { path: string; originalName: string; size: number },
  ): Promise<ModelVersionView> {
    const answer = await this.onnx.inspect(file.path);
    if ('refused' in answer) {
      const { kind, message, path } = answer.refused;
      const details = [{ path, message }];
      if (kind === 'unsupported')
        throw new UnprocessableError(
          `The model uses something this service does not run: ${message}`,
          'MODEL_NOT_SUPPORTED',
          details,
        );
      throw new BadRequestError(`The model file is not a valid ONNX model: ${message}`, 'MODEL_INVALID', details);
    }
    const bytes = await readFile(file.path);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const document = onnxDocument(answer.ok, sha256);
    const record = await this.store.insertVersion(ownerId, name, {
      format: 'ONNX',
      modelType: document.modelType,
      functionName: document.functionName,
      fileName: file.originalName,
      sizeBytes: bytes.length,
      sha256,
      file: bytes,
      document,
    });
    return versionView(record, document);
  }

  async list(ownerId: number): Promise<ModelSummaryView[]> {
    return summaries(await this.store.listVersions(ownerId));
  }

  async get(ownerId: number, name: string): Promise<ModelSummaryView> {
    const [summary] = summaries(await this.store.listVersions(ownerId, name));
    if (!summary) throw notFound(name);
    return summary;
  }

  async version(ownerId: number, name: string, version: number | 'latest'): Promise<ModelVersionView> {
    const record = await this.require(ownerId, name, version);
    return versionView(record, await this.store.documentOf(record.id));
  }

  /** The file as uploaded, with its format (PMML is sent as XML text, ONNX as bytes). */
  async file(
    ownerId: number,
    name: string,
    version: number | 'latest',
  ): Promise<{ format: ModelFormat; bytes: Buffer }> {
    const record = await this.require(ownerId, name, version);
    return { format: record.format, bytes: await this.store.fileOf(record.id) };
  }

  async delete(ownerId: number, name: string, version: number | 'latest'): Promise<void> {
    const record = await this.require(ownerId, name, version);
    const newest = await this.store.findVersion(ownerId, name, 'latest');
    const users = await this.usage.scenariosUsing(ownerId, name, record.version, newest?.id === record.id);
    if (users.length > 0) {
      throw new ConflictError(
        `Version ${record.version} of model "${name}" is used by the deployed version of ${users.map((u) => `"${u}"`).join(', ')}; deploy them without it first.`,
        'MODEL_IN_USE',
        users.map((scenario) => ({
          path: `scenarios.${scenario}`,
          message: `its latest deployed version uses model "${name}" version ${record.version}`,
        })),
      );
    }
    await this.store.deleteVersion(record.id);
  }

  private async require(ownerId: number, name: string, version: number | 'latest'): Promise<ModelVersionRecord> {
    const record = await this.store.findVersion(ownerId, name, version);
    if (!record) throw notFound(name, version);
    return record;
  }
}

/** PMML text → model document; a refused file is a 4xx naming the element at fault, and nothing is stored. */
function readModel(text: string): ModelDocument {
  try {
    return readPmml(text);
  } catch (error) {
    if (!(error instanceof ModelFileError)) throw error;
    const details = [{ path: error.path, message: error.message }];
    if (error.kind === 'unsupported')
      throw new UnprocessableError(
        `The model uses something this service does not run: ${error.message}`,
        'MODEL_NOT_SUPPORTED',
        details,
      );
    throw new BadRequestError(`The model file is not valid PMML: ${error.message}`, 'MODEL_INVALID', details);
  }
}

function notFound(name: string, version?: number | 'latest'): NotFoundError {
  const which = version === undefined || version === 'latest' ? '' : ` version ${version}`;
  return new NotFoundError(`You have no model "${name}"${which}.`, 'MODEL_NOT_FOUND');
}

function versionView(record: ModelVersionRecord, document: ModelDocument): ModelVersionView {
  return {
    name: record.name,
    version: record.version,
    format: record.format,
    modelType: record.modelType,
    functionName: record.functionName,
    ...(document.target !== undefined ? { target: document.target } : {}),
    fileName: record.fileName,
    sizeBytes: record.sizeBytes,
    sha256: record.sha256,
    createdAt: record.createdAt.toISOString(),
    inputs: document.inputs,
    outputs: document.outputs,
  };
}

function summaries(records: ModelVersionRecord[]): ModelSummaryView[] {
  const byName = new Map<string, ModelSummaryView>();
  for (const r of records) {
    let summary = byName.get(r.name);
    if (!summary) {
      summary = { name: r.name, latestVersion: r.version, versions: [] };
      byName.set(r.name, summary);
    }
    summary.versions.push({
      version: r.version,
      modelType: r.modelType,
      functionName: r.functionName,
      fileName: r.fileName,
      sizeBytes: r.sizeBytes,
      createdAt: r.createdAt.toISOString(),
    });
  }
  return [...byName.values()];
}
