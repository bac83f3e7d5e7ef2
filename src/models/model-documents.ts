import { LRUCache } from 'lru-cache';
import {
  modelReferenceKey,
  type ModelDocument,
  type ModelNodeSettings,
  type ScenarioDocument,
} from '../engine/index.js';
import type { ModelStore } from './model-store-type.js';

/** A document ready for the engine: its MODEL nodes' models resolved, and the cache key that names them. */
export interface ResolvedDocument {
  document: ScenarioDocument;
  cacheKey: string;
}

/**
 * What every feature that compiles a scenario needs of the model registry (the engine does no I/O):
 * the document with the models its MODEL nodes name embedded (`document.models`), and its compile-cache
 * key extended with the versions they resolved to, so that a new upload behind `latest` is a new
 * compilation and never a stale cached one. A reference that resolves to nothing is left out: the
 * compiler reports it (MODEL_NOT_FOUND). Documents without MODEL nodes come back as they are.
 */
export interface ModelDocuments {
  resolve(ownerId: number, document: ScenarioDocument, cacheKey: string): Promise<ResolvedDocument>;
}

/** Model references of a document's MODEL nodes; malformed content is left to the compiler's checks. */
function modelReferences(document: ScenarioDocument): Pick<ModelNodeSettings, 'model' | 'version'>[] {
  const references: Pick<ModelNodeSettings, 'model' | 'version'>[] = [];
  for (const entry of Object.values(document.nodeProperties ?? {})) {
    if (entry?.type !== 'MODEL') continue;
    try {
      const settings = JSON.parse(entry.content) as Partial<ModelNodeSettings>;
      if (
        typeof settings.model === 'string' &&
        (settings.version === undefined || settings.version === 'latest' || Number.isInteger(settings.version))
      ) {
        references.push({ model: settings.model, version: settings.version });
      }
    } catch {
      // the compiler names the node whose content is not JSON
    }
  }
  return references;
}

/** Characters of ONNX files (base64) the resolver keeps with their documents: 128 Mi, at most 500 documents. */
const MAX_CACHED_CHARS = 128 * 1_048_576;

export class ModelResolver implements ModelDocuments {
  /**
   * Versions are immutable: a parsed document is good for as long as it is kept. An ONNX model's document carries
   * its file (base64; the compiled program takes it to the engine hosts), so the cache is bounded by size too.
   */
  private readonly documents = new LRUCache<number, ModelDocument>({
    max: 500,
    maxSize: MAX_CACHED_CHARS,
    sizeCalculation: (model) => 1 + (model.model.kind === 'onnx' ? (model.model.file?.length ?? 0) : 0),
  });

  constructor(private readonly store: ModelStore) {}

  async resolve(ownerId: number, document: ScenarioDocument, cacheKey: string): Promise<ResolvedDocument> {
    const references = modelReferences(document);
    if (references.length === 0) return { document, cacheKey };
    const models: Record<string, ModelDocument> = {};
    const resolved: string[] = [];
    for (const reference of references) {
      const key = modelReferenceKey(reference);
      if (key in models) continue;
      const version = await this.store.findVersion(ownerId, reference.model, reference.version ?? 'latest');
      if (!version) continue;
      let model = this.documents.get(version.id);
      if (!model) {
        model = await this.store.documentOf(version.id);
        if (model.model.kind === 'onnx')
          model = {
            ...model,
            model: { ...model.model, file: (await this.store.fileOf(version.id)).toString('base64') },
          };
        this.documents.set(version.id, model);
      }
      models[key] = model;
      resolved.push(`${key}=${version.id}`);
    }
    return { document: { ...document, models }, cacheKey: `${cacheKey}#models:${resolved.sort().join(',')}` };
  }
}

/** For a process or test without a registry: documents are compiled as they are (a MODEL node is MODEL_NOT_FOUND). */
export const NO_MODELS: ModelDocuments = { resolve: async (_ownerId, document, cacheKey) => ({ document, cacheKey }) };
