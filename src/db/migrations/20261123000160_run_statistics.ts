import type { Knex } from 'knex';

/** DDL commits implicitly in MySQL. */
export const config = { transaction: false };

/**
 * Run statistics (src/statistics/): what getScenarioStatistics reads. Every process that runs
 * scenarios counts its runs in memory and adds them here in bulk, with INSERT … ON DUPLICATE KEY
 * UPDATE, so the processes' counts add up in the same rows.
 *
 * - run_statistics_seconds: per second (Unix seconds of the run's end), scenario, version and mode:
 *   runs, errors and the latency's sum, min and max in microseconds. Seconds make peak requests/s exact.
 * - run_statistics_latency: per minute (Unix seconds of its start) the same runs by latency bucket
 *   (quarter octaves of microseconds: bucket b holds [2^(b/4), 2^((b+1)/4)) µs), for the p95.
 *
 * No foreign keys: scenarios are never deleted through the API, and the rows are pruned by age
 * (STATISTICS_RETENTION_DAYS, through the indexes on the time columns). Batches also get an index on
 * finished_at: the scrape-time gauge of pending batch elements reads the unfinished ones.
 */
export async function up(db: Knex): Promise<void> {
  await db.schema.createTable('run_statistics_seconds', (table) => {
    table.integer('scenario_id').unsigned().notNullable();
    table.integer('second').unsigned().notNullable();
    table.string('version', 32).notNullable();
    table.enum('mode', ['sync', 'async', 'batch']).notNullable();
    table.integer('runs').unsigned().notNullable();
    table.integer('errors').unsigned().notNullable();
    table.bigInteger('latency_sum_us').unsigned().notNullable();
    table.integer('latency_min_us').unsigned().notNullable();
    table.integer('latency_max_us').unsigned().notNullable();
    table.primary(['scenario_id', 'second', 'version', 'mode']);
    table.index(['second']);
  });
  await db.schema.createTable('run_statistics_latency', (table) => {
    table.integer('scenario_id').unsigned().notNullable();
    table.integer('minute').unsigned().notNullable();
    table.string('version', 32).notNullable();
    table.enum('mode', ['sync', 'async', 'batch']).notNullable();
    table.smallint('bucket').unsigned().notNullable();
    table.integer('runs').unsigned().notNullable();
    table.primary(['scenario_id', 'minute', 'version', 'mode', 'bucket']);
    table.index(['minute']);
  });
  await db.schema.alterTable('batches', (table) => {
    table.index(['finished_at']);
  });
}

export async function down(db: Knex): Promise<void> {
  await db.schema.alterTable('batches', (table) => {
    table.dropIndex(['finished_at']);
  });
  await db.schema.dropTable('run_statistics_latency');
  await db.schema.dropTable('run_statistics_seconds');
}
