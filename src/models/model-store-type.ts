import type { ModelDocument } from '../engine/index.js';

/** A model file's format. */
export type ModelFormat = 'PMML' | 'ONNX';

/** One version of a model, as stored: the file as uploaded and what was read of it (the PMML reader's model, or an ONNX file's tensors). */
export interface ModelVersionRecord {
  id: number;
  name: string;
  version: number;
  format: ModelFormat;
  modelType: string;
  functionName: 'regression' | 'classification';
  fileName: string;
  sizeBytes: number;
  sha256: string;
  createdAt: Date;
}

export interface NewModelVersion {
  format: ModelFormat;
  modelType: string;
  functionName: string;
  fileName: string;
  sizeBytes: number;
  sha256: string;
  file: Uint8Array;
  document: ModelDocument;
}

/**
 * What the model registry stores: immutable versions per owner and name. Implemented over MySQL by
 * MySqlModelStore (model-store.ts); tests run the same contract suite on it and on an in-memory fake
 * (test/models/support/), so service tests on the fake mean something.
 */
export interface ModelStore {
  /** Stores a new version (numbered after every earlier one of the name, deleted ones included), creating the model on its first upload. */
  insertVersion(ownerId: number, name: string, version: NewModelVersion): Promise<ModelVersionRecord>;
  /** Every version of the owner's models (or of one), models by name, newest version first within a model. */
  listVersions(ownerId: number, name?: string): Promise<ModelVersionRecord[]>;
  /** A version by number, or the newest when `version` is 'latest'. */
  findVersion(ownerId: number, name: string, version: number | 'latest'): Promise<ModelVersionRecord | undefined>;
  /** The file's bytes, as uploaded. */
  fileOf(versionId: number): Promise<Buffer>;
  documentOf(versionId: number): Promise<ModelDocument>;
  deleteVersion(versionId: number): Promise<void>;
}
