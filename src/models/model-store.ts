import type { Knex } from 'knex';
import type { ModelDocument } from '../engine/index.js';
import type { ModelFormat, ModelStore, ModelVersionRecord, NewModelVersion } from './model-store-type.js';

interface VersionRow {
  id: number;
  name: string;
  version_number: number;
  format: string;
  model_type: string;
  function_name: string;
  file_name: string;
  size_bytes: number;
  sha256: string;
  created_at: Date;
}

const COLUMNS = [
  'v.id',
  'm.name',
  'v.version_number',
  'v.format',
  'v.model_type',
  'v.function_name',
  'v.file_name',
  'v.size_bytes',
  'v.sha256',
  'v.created_at',
];

function toRecord(row: VersionRow): ModelVersionRecord {
  return {
    id: row.id,
    name: row.name,
    version: row.version_number,
    format: row.format as ModelFormat,
    modelType: row.model_type,
    functionName: row.function_name as ModelVersionRecord['functionName'],
    fileName: row.file_name,
    sizeBytes: row.size_bytes,
    sha256: row.sha256,
    createdAt: new Date(row.created_at),
  };
}

/** ModelStore over MySQL: Knex queries over models and model_versions; rows never leave it. */
export class MySqlModelStore implements ModelStore {
  constructor(private readonly db: Knex) {}

  /** Stores a new version, creating the model on its first upload; numbers come from the model row, locked. */
  async insertVersion(ownerId: number, name: string, version: NewModelVersion): Promise<ModelVersionRecord> {
    return this.db.transaction(async (trx) => {
      // INSERT IGNORE then lock: two first uploads of one name at once both end up with the one model row.
      await trx.raw('INSERT IGNORE INTO models (owner_id, name) VALUES (?, ?)', [ownerId, name]);
      const model = (await trx('models')
        .where({ owner_id: ownerId, name })
        .forUpdate()
        .first('id', 'next_version')) as { id: number; next_version: number };
      const [id] = await trx('model_versions').insert({
        model_id: model.id,
        version_number: model.next_version,
        format: version.format,
        model_type: version.modelType,
        function_name: version.functionName,
        file_name: version.fileName,
        size_bytes: version.sizeBytes,
        sha256: version.sha256,
        file: Buffer.from(version.file),
        document: JSON.stringify(version.document),
      });
      await trx('models')
        .where({ id: model.id })
        .update({ next_version: model.next_version + 1 });
      const row = (await this.versions(trx).where('v.id', id).first(COLUMNS)) as VersionRow;
      return toRecord(row);
    });
  }

  /** Every version of the owner's models, newest first within a model, models by name. */
  async listVersions(ownerId: number, name?: string): Promise<ModelVersionRecord[]> {
    const query = this.versions(this.db).where('m.owner_id', ownerId);
    if (name !== undefined) query.andWhere('m.name', name);
    const rows = (await query
      .orderBy([{ column: 'm.name' }, { column: 'v.version_number', order: 'desc' }])
      .select(COLUMNS)) as VersionRow[];
    return rows.map(toRecord);
  }

  /** A version by number, or the newest when `version` is 'latest'. */
  async findVersion(
    ownerId: number,
    name: string,
    version: number | 'latest',
  ): Promise<ModelVersionRecord | undefined> {
    const query = this.versions(this.db).where({ 'm.owner_id': ownerId, 'm.name': name });
    if (version !== 'latest') query.andWhere('v.version_number', version);
    const row = (await query.orderBy('v.version_number', 'desc').first(COLUMNS)) as VersionRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  async fileOf(versionId: number): Promise<Buffer> {
    const row = (await this.db('model_versions').where({ id: versionId }).first('file')) as { file: Buffer };
    return row.file;
  }

  async documentOf(versionId: number): Promise<ModelDocument> {
    const row = (await this.db('model_versions').where({ id: versionId }).first('document')) as { document: string };
    return JSON.parse(row.document) as ModelDocument;
  }

  /**
   * Deletes the version. The model row stays when its last version goes: it is listed no more (lists
   * are of versions), and its `next_version` keeps a later upload under the name from reusing a number.
   */
  async deleteVersion(versionId: number): Promise<void> {
    await this.db('model_versions').where({ id: versionId }).delete();
  }

  private versions(db: Knex) {
    return db('model_versions as v').join('models as m', 'm.id', 'v.model_id');
  }
}
