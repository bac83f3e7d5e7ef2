import type { Knex } from 'knex';

/**
 * Model files as bytes (issue 31, ONNX): an ONNX file is binary, so `model_versions.file` becomes LONGBLOB. PMML
 * files keep their bytes (MariaDB converts the utf8mb4 text to its UTF-8 bytes); the store decodes them on the
 * way out. `format` (VARCHAR 16) already holds `ONNX` as well as `PMML`.
 */
export async function up(db: Knex): Promise<void> {
  await db.raw('ALTER TABLE model_versions MODIFY file LONGBLOB NOT NULL');
}

export async function down(db: Knex): Promise<void> {
  // ONNX files cannot be text: their versions go with the column
  await db('model_versions').where({ format: 'ONNX' }).delete();
  await db.raw('ALTER TABLE model_versions MODIFY file LONGTEXT CHARACTER SET utf8mb4 NOT NULL');
}
