import type { ModelDocument } from '../../../src/engine/index.js';
import type { ModelStore, ModelVersionRecord, NewModelVersion } from '../../../src/models/model-store-type.js';

interface StoredVersion {
  ownerId: number;
  record: ModelVersionRecord;
  file: Buffer;
  document: ModelDocument;
}

/** ModelStore in memory, for fast service tests; held to the same contract as MySqlModelStore (model-store-contract.ts). */
export class FakeModelStore implements ModelStore {
  private readonly nextVersion = new Map<string, number>();
  private readonly versions: StoredVersion[] = [];
  private nextId = 1;

  async insertVersion(ownerId: number, name: string, version: NewModelVersion): Promise<ModelVersionRecord> {
    const key = `${ownerId}\u0000${name}`;
    const number = this.nextVersion.get(key) ?? 1;
    this.nextVersion.set(key, number + 1);
    const record: ModelVersionRecord = {
      id: this.nextId++,
      name,
      version: number,
      format: version.format,
      modelType: version.modelType,
      functionName: version.functionName as ModelVersionRecord['functionName'],
      fileName: version.fileName,
      sizeBytes: version.sizeBytes,
      sha256: version.sha256,
      createdAt: new Date(),
    };
    this.versions.push({
      ownerId,
      record,
      file: Buffer.from(version.file),
      document: structuredClone(version.document),
    });
    return { ...record };
  }

  async listVersions(ownerId: number, name?: string): Promise<ModelVersionRecord[]> {
    return this.versions
      .filter((v) => v.ownerId === ownerId && (name === undefined || v.record.name === name))
      .map((v) => ({ ...v.record }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : b.version - a.version));
  }

  async findVersion(
    ownerId: number,
    name: string,
    version: number | 'latest',
  ): Promise<ModelVersionRecord | undefined> {
    const [found] = (await this.listVersions(ownerId, name)).filter(
      (v) => version === 'latest' || v.version === version,
    );
    return found;
  }

  async fileOf(versionId: number): Promise<Buffer> {
    return Buffer.from(this.byId(versionId).file);
  }

  async documentOf(versionId: number): Promise<ModelDocument> {
    return structuredClone(this.byId(versionId).document);
  }

  async deleteVersion(versionId: number): Promise<void> {
    const index = this.versions.findIndex((v) => v.record.id === versionId);
    if (index >= 0) this.versions.splice(index, 1);
  }

  private byId(versionId: number): StoredVersion {
    const found = this.versions.find((v) => v.record.id === versionId);
    if (!found) throw new Error(`no model version ${versionId}`);
    return found;
  }
}
