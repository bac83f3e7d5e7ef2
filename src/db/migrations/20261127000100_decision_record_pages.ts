import type { Knex } from 'knex';

/**
 * Decision records in pages (docs/records.md, "Storage"; src/records/record-page.ts): one row per
 * page of records of one scenario version, instead of one row per record. `seq` is the order pages
 * were stored in, which is the lists' newest-first order. The filters the rows can answer have their
 * columns: version, start times (the page's first and last), failures, and the records' ids and
 * request ids (`\n`-separated, found with INSTR). Every record of the old table moves to a page of its
 * own, in the old newest-first order; `down` moves them back.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('decision_record_pages', (table) => {
    table.bigIncrements('seq').primary();
    table.integer('owner_id').unsigned().notNullable();
    table.integer('scenario_id').unsigned().notNullable();
    table.string('scenario_name', 190).collate('utf8mb4_bin').notNullable();
    table.string('version', 32).collate('utf8mb4_bin').notNullable();
    table.integer('version_id').unsigned().notNullable();
    table.tinyint('format').unsigned().notNullable().defaultTo(1);
    table.integer('records').unsigned().notNullable();
    table.integer('failed').unsigned().notNullable();
    table.datetime('first_began_at', { precision: 3 }).notNullable();
    table.datetime('last_began_at', { precision: 3 }).notNullable();
    table.specificType('ids', 'MEDIUMBLOB').notNullable();
    table.specificType('request_ids', 'MEDIUMBLOB').notNullable();
    table.specificType('ends', 'MEDIUMBLOB').notNullable();
    table.specificType('body', 'LONGBLOB').notNullable();
    table.datetime('recorded_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.index(['scenario_id', 'seq'], 'decision_record_pages_scenario');
    table.index(['scenario_id', 'version', 'seq'], 'decision_record_pages_scenario_version');
    table.index(['scenario_id', 'last_began_at'], 'decision_record_pages_scenario_last_began');
  });
  if (await db.schema.hasTable('decision_records')) {
    // One page per record, oldest first so that newer records get higher `seq`.
    const millis = (column: string) => `(TIMESTAMPDIFF(MICROSECOND, '1970-01-01 00:00:00', ${column}) DIV 1000)`;
    const text =
      `CONCAT('[', JSON_QUOTE(id), ',', requester_id, ',', JSON_QUOTE(request_id), ',"', mode, '",', IFNULL(JSON_QUOTE(batch_id), 'null'), ',"', state, '",', ` +
      `${millis('began_at')}, ',', ${millis('ended_at')}, ',', duration_micros, ',', inputs, ',', IFNULL(result, 'null'), ',', IFNULL(error, 'null'), ',', ` +
      `IFNULL(masked_inputs, 'null'), ',', IFNULL(trace, 'null'), ',', IFNULL(captures, 'null'), ']')`;
    await db.raw(`INSERT INTO decision_record_pages (owner_id, scenario_id, scenario_name, version, version_id, format, records, failed, first_began_at, last_began_at, ids, request_ids, ends, body, recorded_at)
      SELECT owner_id, scenario_id, scenario_name, version, version_id, 1, 1, state = 'FAILED', began_at, began_at, CONCAT('\\n', id, '\\n'), CONCAT('\\n', request_id, '\\n'),
        UNHEX(LPAD(HEX(LENGTH(page.body)), 8, '0')), page.body, recorded_at
      FROM (SELECT *, CAST(${text} AS BINARY) AS body FROM decision_records) page ORDER BY began_at, seq`);
    await db.schema.dropTable('decision_records');
  }
}

export async function down(db: Knex): Promise<void> {
  await db.schema.createTable('decision_records', (table) => {
    table.bigIncrements('seq').primary();
    table.string('id', 36).collate('utf8mb4_bin').notNullable();
    table.integer('owner_id').unsigned().notNullable();
    table.integer('scenario_id').unsigned().notNullable();
    table.string('scenario_name', 190).collate('utf8mb4_bin').notNullable();
    table.string('version', 32).collate('utf8mb4_bin').notNullable();
    table.integer('version_id').unsigned().notNullable();
    table.enum('mode', ['SYNC', 'ASYNC', 'BATCH']).notNullable();
    table.integer('requester_id').unsigned().notNullable();
    table.string('request_id', 190).collate('utf8mb4_bin').notNullable();
    table.string('batch_id', 36).nullable();
    table.enum('state', ['SUCCEEDED', 'FAILED']).notNullable();
    table.specificType('inputs', 'LONGTEXT').notNullable();
    table.text('masked_inputs').nullable();
    table.specificType('result', 'LONGTEXT').nullable();
    table.specificType('error', 'LONGTEXT').nullable();
    table.datetime('began_at', { precision: 3 }).notNullable();
    table.datetime('ended_at', { precision: 3 }).notNullable();
    table.integer('duration_micros').unsigned().notNullable();
    table.specificType('trace', 'LONGTEXT').nullable();
    table.specificType('captures', 'LONGTEXT').nullable();
    table.datetime('recorded_at', { precision: 3 }).notNullable().defaultTo(db.fn.now(3));
    table.integer('json_chars').unsigned().nullable();
    table.index(['scenario_id', 'began_at'], 'decision_records_scenario_time');
    table.index(['scenario_id', 'version', 'began_at'], 'decision_records_scenario_version_time');
    table.index(['scenario_id', 'state', 'began_at'], 'decision_records_scenario_state_time');
    table.index(['scenario_id', 'request_id'], 'decision_records_scenario_request');
  });
  // Records of pages stored since cannot be split in SQL: only pages of one record (those moved here) go back.
  await db.raw(`INSERT INTO decision_records (id, owner_id, scenario_id, scenario_name, version, version_id, mode, requester_id, request_id, batch_id, state, inputs, masked_inputs, result, error, began_at, ended_at, duration_micros, trace, captures, recorded_at)
    SELECT JSON_VALUE(b, '$[0]'), owner_id, scenario_id, scenario_name, version, version_id, JSON_VALUE(b, '$[3]'), JSON_VALUE(b, '$[1]'), JSON_VALUE(b, '$[2]'), JSON_VALUE(b, '$[4]'), JSON_VALUE(b, '$[5]'),
      JSON_EXTRACT(b, '$[9]'), NULLIF(JSON_EXTRACT(b, '$[12]'), 'null'), NULLIF(JSON_EXTRACT(b, '$[10]'), 'null'), NULLIF(JSON_EXTRACT(b, '$[11]'), 'null'),
      first_began_at, TIMESTAMP('1970-01-01 00:00:00') + INTERVAL JSON_VALUE(b, '$[7]') * 1000 MICROSECOND, JSON_VALUE(b, '$[8]'), NULLIF(JSON_EXTRACT(b, '$[13]'), 'null'), NULLIF(JSON_EXTRACT(b, '$[14]'), 'null'), recorded_at
    FROM (SELECT *, CONVERT(body USING utf8mb4) AS b FROM decision_record_pages WHERE records = 1) page ORDER BY seq`);
  await db.schema.dropTable('decision_record_pages');
}
