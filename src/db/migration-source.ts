import type { Knex } from 'knex';
import * as users from './migrations/20261122000001_users.js';
import * as scenarios from './migrations/20261122000002_scenarios.js';
import * as runs from './migrations/20261122000003_runs.js';
import * as internalData from './migrations/20261122000004_internal_data.js';
import * as runErrorDetails from './migrations/20261122000005_run_error_details.js';
import * as runQueuedAt from './migrations/20261122000006_run_queued_at.js';
import * as scoreTokenHashOnly from './migrations/20261123000101_score_token_hash_only.js';
import * as caseSensitiveNames from './migrations/20261123000102_case_sensitive_names.js';
import * as testCaseExpression from './migrations/20261123000120_test_case_expression_mediumtext.js';
import * as batchChunks from './migrations/20261123000130_batch_chunks.js';
import * as batchChunkCounts from './migrations/20261123000140_batch_chunk_counts.js';
import * as runStatistics from './migrations/20261123000160_run_statistics.js';
import * as decisionRecords from './migrations/20261124000100_decision_records.js';
import * as replays from './migrations/20261124000300_replays.js';
import * as replayClaims from './migrations/20261124000400_replay_claims.js';
import * as replayOwnerState from './migrations/20261125000100_replay_owner_state.js';
import * as decisionRecordJsonChars from './migrations/20261126000100_decision_record_json_chars.js';
import * as decisionRecordPages from './migrations/20261127000100_decision_record_pages.js';
import * as decisionRecordPageBytes from './migrations/20261127000200_decision_record_page_bytes.js';
import * as models from './migrations/20261127000300_models.js';
import * as batchIdempotencyKeys from './migrations/20261127002700_batch_idempotency_keys.js';
import * as recoveryIndexes from './migrations/20261127002710_recovery_indexes.js';
import * as replayCancelled from './migrations/20261127002720_replay_cancelled.js';
import * as runAttempts from './migrations/20261127002730_run_attempts.js';
import * as userCallbackSecrets from './migrations/20261128002800_user_callback_secrets.js';
import * as finishedRunInputs from './migrations/20261128002900_finished_run_inputs.js';
import * as runResultsRetention from './migrations/20261128003000_run_results_retention.js';
import * as callbackSecretOverlap from './migrations/20261128003100_callback_secret_overlap.js';
import * as modelFilesBinary from './migrations/20261128003200_model_files_binary.js';
import * as shadows from './migrations/20261129003200_shadows.js';
import * as splits from './migrations/20261129003300_splits.js';
import * as liveTestRunsRetention from './migrations/20261129003400_live_test_runs_retention.js';

interface Migration {
  up(db: Knex): Promise<void>;
  down(db: Knex): Promise<void>;
}

/**
 * Migrations are imported statically (not discovered on disk) so the same list runs under tsx,
 * compiled JavaScript and jest's ESM loader. Append new migrations; never edit a merged one.
 */
const MIGRATIONS: Array<[string, Migration]> = [
  ['20261122000001_users', users],
  ['20261122000002_scenarios', scenarios],
  ['20261122000003_runs', runs],
  ['20261122000004_internal_data', internalData],
  ['20261122000005_run_error_details', runErrorDetails],
  ['20261122000006_run_queued_at', runQueuedAt],
  ['20261123000101_score_token_hash_only', scoreTokenHashOnly],
  ['20261123000102_case_sensitive_names', caseSensitiveNames],
  ['20261123000120_test_case_expression_mediumtext', testCaseExpression],
  ['20261123000130_batch_chunks', batchChunks],
  ['20261123000140_batch_chunk_counts', batchChunkCounts],
  ['20261123000160_run_statistics', runStatistics],
  ['20261124000100_decision_records', decisionRecords],
  ['20261124000300_replays', replays],
  ['20261124000400_replay_claims', replayClaims],
  ['20261125000100_replay_owner_state', replayOwnerState],
  ['20261126000100_decision_record_json_chars', decisionRecordJsonChars],
  ['20261127000100_decision_record_pages', decisionRecordPages],
  ['20261127000200_decision_record_page_bytes', decisionRecordPageBytes],
  ['20261127000300_models', models],
  ['20261127002700_batch_idempotency_keys', batchIdempotencyKeys],
  ['20261127002710_recovery_indexes', recoveryIndexes],
  ['20261127002720_replay_cancelled', replayCancelled],
  ['20261127002730_run_attempts', runAttempts],
  ['20261128002800_user_callback_secrets', userCallbackSecrets],
  ['20261128002900_finished_run_inputs', finishedRunInputs],
  ['20261128003000_run_results_retention', runResultsRetention],
  ['20261128003100_callback_secret_overlap', callbackSecretOverlap],
  ['20261128003200_model_files_binary', modelFilesBinary],
  ['20261129003200_shadows', shadows],
  ['20261129003300_splits', splits],
  ['20261129003400_live_test_runs_retention', liveTestRunsRetention],
];

export class StaticMigrationSource implements Knex.MigrationSource<string> {
  async getMigrations(): Promise<string[]> {
    return MIGRATIONS.map(([name]) => name);
  }

  getMigrationName(migration: string): string {
    return migration;
  }

  async getMigration(name: string): Promise<Migration> {
    const found = MIGRATIONS.find(([candidate]) => candidate === name);
    if (!found) throw new Error(`Unknown migration ${name}`);
    return found[1];
  }
}
