import type { Knex } from 'knex';
import { timeOrderedId } from '../ids/time-ordered-id.js';
import { insertStatement } from '../db/sql-literals.js';
import type { RunError, RunOutcome } from './run-outcome.js';
import { writeFinishedRuns } from './finished-run-writes.js';
import { parseObject, storedError } from './run-columns.js';
import { retryOnDeadlock } from '../db/deadlock-retry.js';
import { NO_STORED_RUN_RECORDS, type HeldRecord, type StoredRunRecords } from '../records/run-recorder.js';
import type { BatchStore } from './batch-store-type.js';
import { camelCased } from '../db/row-fields.js';
import { selectIds } from '../db/selected-ids.js';

export type { BatchStore } from './batch-store-type.js';

export interface BatchRecord {
  id: string;
  userId: number;
  scenarioName: string;
  total: number;
  chunkCount: number;
  createdAt: Date;
  finishedAt: Date | null;
}

export interface NewBatch {
  id: string;
  userId: number;
  scenarioName: string;
  chunkSize: number;
  inputs: Record<string, unknown>[];
  /** The submission's Idempotency-Key and the SHA-256 of its body, when it came with one. */
  idempotency?: BatchIdempotency;
}

export interface BatchIdempotency {
  key: string;
  bodyHash: Buffer;
}

/** A batch as listBatches shows it (its progress counts are getBatchStatus's). */
export interface BatchListing extends BatchRecord {
  /** Some chunk job has started on the batch. */
  started: boolean;
  idempotencyKey: string | null;
}

/** Elements [from, to) of a batch: what one chunk job covers. */
export interface ChunkRange {
  batchId: string;
  from: number;
  to: number;
}

/** Unfinished elements stored together (one batch_chunks row): their inputs, and whether a job started on them before. */
export interface ChunkPart {
  from: number;
  to: number;
  inputs: Record<string, unknown>[];
  started: boolean;
  /** Times a chunk job started the part before (markStarted counts each start). */
  attempts: number;
}

export interface ElementOutcome {
  index: number;
  outcome: RunOutcome;
  /** The element's result id when chosen before the run (its decision record has the same id); else a new one. */
  resultId?: string;
}

export interface BatchProgress {
  succeeded: number;
  failed: number;
  /** Some chunk job has started on the batch. */
  started: boolean;
}

/** One finished element, as getBatchResults streams it. */
export interface BatchElementResult {
  index: number;
  resultId: string;
  state: 'SUCCEEDED' | 'FAILED';
  result: Record<string, unknown> | null;
  error: RunError | null;
}

interface BatchRow {
  id: string;
  user_id: number;
  scenario_name: string;
  total: number;
  chunk_count: number;
  created_at: Date;
  finished_at: Date | null;
}

/** The columns of a BatchRow, as the queries that join `batches as b` to other tables select them. */
const BATCH_COLUMNS = [
  'b.id',
  'b.user_id',
  'b.scenario_name',
  'b.total',
  'b.chunk_count',
  'b.created_at',
  'b.finished_at',
] as const satisfies ReadonlyArray<`b.${keyof BatchRow}`>;

/** A part's progress columns, as batchProgress reads them next to its batch's (null when the batch has no parts). */
interface PartProgressRow {
  from_index: number | null;
  to_index: number;
  part_started_at: Date | null;
  part_finished_at: Date | null;
  succeeded: number;
  failed: number;
}

interface ResultRow {
  id: string;
  element_index: number;
  state: 'SUCCEEDED' | 'FAILED';
  result: string | null;
  error_code: string | null;
  error_message: string | null;
  error_details: string | null;
}

/**
 * Inputs are stored in parts of at most this many bytes of JSON (one element larger than that is a
 * part of its own), and inserted in statements of at most this much JSON: written as hexadecimal
 * literals (sql-literals.ts) that is at most 8 MiB of SQL, below MySQL's max_allowed_packet (16 MiB
 * by default on MariaDB, 64 MiB on MySQL 8).
 */
const MAX_PART_BYTES = 4 * 1024 * 1024;

/**
 * Knex queries on batches, batch_chunks and the run_results rows of batch elements. A batch's
 * inputs are stored per chunk (one row, or a few when large, per range of elements), and each
 * element's result row is inserted once it finished, many per statement: a batch of N elements
 * costs about N/500 input rows and N result rows, and no updates of element rows (the BatchStore
 * contract: batch-store-type.ts).
 */
export class MySqlBatchStore implements BatchStore {
  /** `records`: the records feature's writer of stored runs' records, in the transaction of their results. */
  constructor(
    private readonly db: Knex,
    private readonly records: StoredRunRecords = NO_STORED_RUN_RECORDS,
  ) {}

  /**
   * The batch and its inputs, in one transaction. Throws a duplicate-key error (isDuplicateKey) when the
   * user already submitted a batch with the same idempotency key: nothing is stored then.
   */
  async insertBatch(batch: NewBatch): Promise<void> {
    const parts = inputParts(batch);
    await this.db.transaction(async (trx) => {
      await trx('batches').insert({
        id: batch.id,
        user_id: batch.userId,
        scenario_name: batch.scenarioName,
        total: batch.inputs.length,
        chunk_count: Math.ceil(batch.inputs.length / batch.chunkSize),
        idempotency_key: batch.idempotency?.key ?? null,
        body_hash: batch.idempotency?.bodyHash ?? null,
      });
      let statement: InputPart[] = [];
      let bytes = 0;
      for (const part of parts) {
        if (statement.length > 0 && bytes + part.inputs.length > MAX_PART_BYTES) {
          await trx.raw(insertParts(batch.id, statement));
          statement = [];
          bytes = 0;
        }
        statement.push(part);
        bytes += part.inputs.length;
      }
      if (statement.length > 0) await trx.raw(insertParts(batch.id, statement));
    });
  }

  /** Undoes insertBatch (its chunks and results go with it) when its jobs could not be saved. */
  /** Up to `limit` batches that finished before `cutoff`, oldest first. */
  async finishedBefore(cutoff: Date, limit: number): Promise<string[]> {
    return selectIds(this.db('batches').where('finished_at', '<', cutoff).orderBy('finished_at').limit(limit));
  }

  /** Deletes up to `limit` of a batch's element rows (with their callback attempts); answers how many. */
  async deleteElements(batchId: string, limit: number): Promise<number> {
    const [result] = (await this.db.raw('DELETE FROM run_results WHERE batch_id = ? LIMIT ?', [batchId, limit])) as [
      { affectedRows: number },
    ];
    return result.affectedRows;
  }

  async deleteBatch(id: string): Promise<void> {
    await this.db('batches').where({ id }).delete();
  }

  /** The user's batch submitted with this idempotency key, with the hash of the body it came with. */
  async findByIdempotencyKey(
    userId: number,
    key: string,
  ): Promise<{ id: string; bodyHash: Buffer | null } | undefined> {
    const row = (await this.db('batches').where({ user_id: userId, idempotency_key: key }).first('id', 'body_hash')) as
      | { id: string; body_hash: Buffer | null }
      | undefined;
    return row ? { id: row.id, bodyHash: row.body_hash } : undefined;
  }

  /**
   * A page of the user's batches, newest first by (created_at, id), after `before` when given: keyset
   * paging on the (user_id, created_at) index (InnoDB keeps the id in it), one query with whether any
   * chunk has started (the state's QUEUED or RUNNING).
   */
  async listBatches(userId: number, limit: number, before?: { createdAt: Date; id: string }): Promise<BatchListing[]> {
    const query = this.db('batches as b').where('b.user_id', userId);
    if (before) {
      query.andWhere((older) =>
        older
          .where('b.created_at', '<', before.createdAt)
          .orWhere((same) => same.where('b.created_at', '=', before.createdAt).andWhere('b.id', '<', before.id)),
      );
    }
    const rows = (await query
      .orderBy([
        { column: 'b.created_at', order: 'desc' },
        { column: 'b.id', order: 'desc' },
      ])
      .limit(limit)
      .select(
        ...BATCH_COLUMNS,
        'b.idempotency_key',
        this.db.raw(
          'EXISTS (SELECT 1 FROM batch_chunks c WHERE c.batch_id = b.id AND c.started_at IS NOT NULL) AS started',
        ),
      )) as Array<BatchRow & { idempotency_key: string | null; started: number | string }>;
    return rows.map((row) => ({
      ...toBatch(row),
      started: Number(row.started) === 1,
      idempotencyKey: row.idempotency_key,
    }));
  }

  async findBatch(id: string): Promise<BatchRecord | undefined> {
    const row = (await this.db('batches').where({ id }).first()) as BatchRow | undefined;
    return row ? toBatch(row) : undefined;
  }

  /**
   * What a chunk job works on, in one query: the batch, and its unfinished parts whose first element
   * lies in [from, to), in element order. Undefined when the batch is gone.
   */
  async chunkWork(range: ChunkRange): Promise<{ batch: BatchRecord; parts: ChunkPart[] } | undefined> {
    const rows = (await this.db('batches as b')
      .leftJoin('batch_chunks as c', (join) => {
        join
          .on('c.batch_id', '=', 'b.id')
          .andOn('c.from_index', '>=', this.db.raw('?', [range.from]))
          .andOn('c.from_index', '<', this.db.raw('?', [range.to]))
          .andOnNull('c.finished_at');
      })
      .where('b.id', range.batchId)
      .orderBy('c.from_index')
      .select(...BATCH_COLUMNS, 'c.from_index', 'c.to_index', 'c.inputs', 'c.started_at', 'c.attempts')) as Array<
      BatchRow & {
        from_index: number | null;
        to_index: number;
        inputs: string;
        started_at: Date | null;
        attempts: number;
      }
    >;
    if (rows.length === 0) return undefined;
    const parts = rows
      .filter((row) => row.from_index !== null)
      .map((row) => ({
        from: row.from_index as number,
        to: row.to_index,
        inputs: JSON.parse(row.inputs) as Record<string, unknown>[],
        started: row.started_at !== null,
        attempts: Number(row.attempts ?? 0),
      }));
    return { batch: toBatch(rows[0]), parts };
  }

  /** Marks the unfinished parts of the range started (the first time) and counts this start of each. */
  async markStarted(range: ChunkRange): Promise<void> {
    await this.inRange(range)
      .whereNull('finished_at')
      .update({
        started_at: this.db.raw('COALESCE(??, NOW(3))', ['started_at']),
        attempts: this.db.raw('?? + 1', ['attempts']),
      });
  }

  /** Indexes in [from, to) whose result is already stored (a chunk resumed after its worker died or stopped). */
  async storedIndexes(range: ChunkRange): Promise<Set<number>> {
    const rows = (await this.db('run_results')
      .where('batch_id', range.batchId)
      .andWhere('element_index', '>=', range.from)
      .andWhere('element_index', '<', range.to)
      .select('element_index')) as Array<{ element_index: number }>;
    return new Set(rows.map((row) => row.element_index));
  }

  /**
   * Stores finished elements with multi-row inserts, each under its result id, and their decision
   * records (`held`, by result id), in one transaction: a record is committed exactly when its
   * element's result is. An element stored already (the same chunk run twice at once: a lock taken
   * over from a worker that was only slow) keeps its first result: the unique (batch_id,
   * element_index) turns the second into a no-op, and only the records of the rows this call stored
   * (their ids are this call's result ids) are written, so it is recorded once. An element whose row
   * the database refuses is stored as RESULT_NOT_STORED and the others as they are
   * (writeFinishedRuns); one that cannot be stored even so fails the call (the chunk job), once the
   * others are committed.
   */
  async insertResults(batch: BatchRecord, results: ElementOutcome[], held: readonly HeldRecord[] = []): Promise<void> {
    if (results.length === 0) return;
    const finished = results.map(({ index, outcome, resultId }) => {
      const id = resultId ?? timeOrderedId();
      return {
        run: {
          id,
          userId: batch.userId,
          requestId: id,
          scenarioName: batch.scenarioName,
          batchId: batch.id,
          elementIndex: index,
        },
        outcome,
      };
    });
    const { failure, afterCommit } = await retryOnDeadlock(() =>
      this.db.transaction(async (trx) => {
        const written = await writeFinishedRuns(trx, finished, 'ON DUPLICATE KEY UPDATE `id` = `id`');
        const ids = finished.filter((_, k) => written.errors[k] === null).map(({ run }) => run.id);
        // Every row new (the usual case): each is this call's, no need to read them back.
        const records =
          held.length === 0 || ids.length === 0
            ? []
            : written.allNew
              ? heldFor(ids, held)
              : await this.storedByThisCall(trx, ids, held);
        return {
          failure: written.errors.find((error) => error !== null),
          afterCommit: await this.records.write(trx, records),
        };
      }),
    );
    this.records.recordAfterCommit(afterCommit);
    if (failure) throw failure;
  }

  /** The held records whose rows this transaction stored: rows with their result ids (a row stored before keeps another id). */
  private async storedByThisCall(
    trx: Knex.Transaction,
    ids: string[],
    held: readonly HeldRecord[],
  ): Promise<HeldRecord[]> {
    const stored: string[] = [];
    for (let k = 0; k < ids.length; k += 1000)
      stored.push(...(await selectIds(trx('run_results').whereIn('id', ids.slice(k, k + 1000)))));
    return heldFor(stored, held);
  }

  /**
   * Marks a part finished and keeps its counts of succeeded and failed elements, counted from its
   * stored results (a plain read: a locking one would deadlock with other parts' inserts). Two
   * workers finishing the same part at once (a lock taken over from a slow worker) each count after
   * their own inserts; counts only grow (an element is stored once), so the larger count stands.
   */
  async markPartFinished(batchId: string, part: { from: number; to: number }): Promise<void> {
    const counts = (await this.db('run_results')
      .where('batch_id', batchId)
      .andWhere('element_index', '>=', part.from)
      .andWhere('element_index', '<', part.to)
      .groupBy('state')
      .select('state')
      .count({ n: '*' })) as unknown as Array<{ state: string; n: number | string }>;
    const count = (state: string) => Number(counts.find((row) => row.state === state)?.n ?? 0);
    await this.db('batch_chunks')
      .where({ batch_id: batchId, from_index: part.from })
      .update({
        finished_at: this.db.fn.now(3),
        // Every element of the part is stored: its inputs (which may hold personal data) are read no more
        // (chunkWork reads unfinished parts only), so they are not kept.
        inputs: '[]',
        succeeded: this.db.raw('GREATEST(??, ?)', ['succeeded', count('SUCCEEDED')]),
        failed: this.db.raw('GREATEST(??, ?)', ['failed', count('FAILED')]),
      });
  }

  /**
   * Marks the batch finished when none of its parts is unfinished; true when this call did.
   * Every chunk job calls it after its own parts: the last one to finish sees no unfinished part.
   */
  async finishIfComplete(batchId: string): Promise<boolean> {
    const updated = await this.db('batches')
      .where({ id: batchId })
      .whereNull('finished_at')
      .whereNotExists((query) =>
        query.select(this.db.raw('1')).from('batch_chunks').where('batch_id', batchId).whereNull('finished_at'),
      )
      .update({ finished_at: this.db.fn.now(3) });
    return updated > 0;
  }

  /**
   * The batch and its progress, in one query when no part is running (two when one is): finished
   * parts answer from their counts, and only the results of started, unfinished parts are counted
   * (a part never started has none), so a status costs about the same however many elements finished.
   */
  async batchProgress(batchId: string): Promise<{ batch: BatchRecord; progress: BatchProgress } | undefined> {
    const rows = (await this.db('batches as b')
      .leftJoin('batch_chunks as c', 'c.batch_id', 'b.id')
      .where('b.id', batchId)
      .orderBy('c.from_index')
      .select(
        ...BATCH_COLUMNS,
        'c.from_index',
        'c.to_index',
        { part_started_at: 'c.started_at', part_finished_at: 'c.finished_at' },
        'c.succeeded',
        'c.failed',
      )) as Array<BatchRow & PartProgressRow>;
    if (rows.length === 0) return undefined;
    const progress: BatchProgress = { succeeded: 0, failed: 0, started: false };
    const running: Array<[number, number]> = [];
    for (const part of rows) {
      if (part.from_index === null) continue;
      if (part.part_started_at !== null) progress.started = true;
      if (part.part_finished_at !== null) {
        progress.succeeded += part.succeeded;
        progress.failed += part.failed;
      } else if (part.part_started_at !== null) {
        const last = running[running.length - 1];
        if (last && last[1] === part.from_index) last[1] = part.to_index;
        else running.push([part.from_index, part.to_index]);
      }
    }
    if (running.length > 0) {
      const counts = (await this.db('run_results')
        .where('batch_id', batchId)
        .andWhere((ranges) => {
          for (const [from, to] of running)
            ranges.orWhere((range) => range.where('element_index', '>=', from).andWhere('element_index', '<', to));
        })
        .groupBy('state')
        .select('state')
        .count({ n: '*' })) as unknown as Array<{ state: string; n: number | string }>;
      for (const { state, n } of counts) {
        if (state === 'SUCCEEDED') progress.succeeded += Number(n);
        else if (state === 'FAILED') progress.failed += Number(n);
      }
    }
    return { batch: toBatch(rows[0]), progress };
  }

  /**
   * Elements of all unfinished batches (every user's) whose results are not stored yet: the
   * metrics' scrape-time gauge. Reads the unfinished batches by their finished_at index and counts
   * their stored results on (batch_id, element_index).
   */
  async pendingElements(): Promise<number> {
    const [submitted, stored] = await Promise.all([
      this.db('batches').whereNull('finished_at').sum({ n: 'total' }).first() as Promise<
        { n: string | number | null } | undefined
      >,
      this.db('run_results as r')
        .join('batches as b', 'b.id', 'r.batch_id')
        .whereNull('b.finished_at')
        .count({ n: '*' })
        .first() as Promise<{ n: string | number } | undefined>,
    ]);
    return Number(submitted?.n ?? 0) - Number(stored?.n ?? 0);
  }

  async resultIds(batchId: string): Promise<string[]> {
    return selectIds(this.db('run_results').where('batch_id', batchId).orderBy('element_index'));
  }

  /**
   * Every stored element result in element order, `pageSize` per query (keyset pages on
   * (batch_id, element_index)): no connection is held between pages, however slowly they are read.
   */
  async *results(batchId: string, pageSize: number): AsyncGenerator<BatchElementResult[]> {
    let after = -1;
    for (;;) {
      const rows = (await this.db('run_results')
        .where('batch_id', batchId)
        .andWhere('element_index', '>', after)
        .orderBy('element_index')
        .limit(pageSize)
        .select(
          'id',
          'element_index',
          'state',
          'result',
          'error_code',
          'error_message',
          'error_details',
        )) as ResultRow[];
      if (rows.length === 0) return;
      yield rows.map((row) => ({
        index: row.element_index,
        resultId: row.id,
        state: row.state,
        result: row.state === 'SUCCEEDED' ? parseObject(row.result) : null,
        error: storedError(row),
      }));
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1].element_index;
    }
  }

  /**
   * Unfinished parts queued before `cutoff`, never started or started by a worker that may be gone: the
   * sweeper's candidates, kept only when no pending chunk job covers them.
   */
  async stalledChunks(cutoff: Date, limit: number): Promise<ChunkRange[]> {
    const rows = (await this.db('batch_chunks')
      .whereNull('finished_at')
      .andWhere('queued_at', '<', cutoff)
      .limit(limit)
      .select('batch_id', 'from_index', 'to_index')) as Array<{
      batch_id: string;
      from_index: number;
      to_index: number;
    }>;
    return rows.map((row) => ({ batchId: row.batch_id, from: row.from_index, to: row.to_index }));
  }

  /** Claims a stalled part for re-queuing (moves its queued_at); false when another sweeper was first or it finished meanwhile. */
  async claimStalled(cutoff: Date, chunk: ChunkRange): Promise<boolean> {
    const claimed = await this.db('batch_chunks')
      .where({ batch_id: chunk.batchId, from_index: chunk.from })
      .whereNull('finished_at')
      .andWhere('queued_at', '<', cutoff)
      .update({ queued_at: this.db.fn.now(3) });
    return claimed > 0;
  }

  private inRange(range: ChunkRange): Knex.QueryBuilder {
    return this.db('batch_chunks')
      .where('batch_id', range.batchId)
      .andWhere('from_index', '>=', range.from)
      .andWhere('from_index', '<', range.to);
  }
}

/** Elements [from, to) of a batch and their inputs as one JSON array. */
export interface InputPart {
  from: number;
  to: number;
  inputs: Buffer;
}

/**
 * The batch's inputs in parts: one per chunk of `chunkSize` elements, a chunk split further where its
 * JSON would pass MAX_PART_BYTES. Each part's JSON is its inputs' text as one array.
 */
export function inputParts(batch: NewBatch): InputPart[] {
  const parts: InputPart[] = [];
  for (let chunkStart = 0; chunkStart < batch.inputs.length; chunkStart += batch.chunkSize) {
    const chunkEnd = Math.min(chunkStart + batch.chunkSize, batch.inputs.length);
    const whole = Buffer.from(JSON.stringify(batch.inputs.slice(chunkStart, chunkEnd)), 'utf8');
    if (whole.length <= MAX_PART_BYTES) parts.push({ from: chunkStart, to: chunkEnd, inputs: whole });
    else parts.push(...splitChunk(batch.inputs, chunkStart, chunkEnd));
  }
  return parts;
}

/** A chunk too large for one part: as many parts as its elements need, each at most MAX_PART_BYTES (or one element). */
function splitChunk(inputs: Record<string, unknown>[], chunkStart: number, chunkEnd: number): InputPart[] {
  const parts: InputPart[] = [];
  let from = chunkStart;
  let texts: string[] = [];
  let bytes = 2;
  const close = (to: number) => parts.push({ from, to, inputs: Buffer.from(`[${texts.join(',')}]`, 'utf8') });
  for (let index = chunkStart; index < chunkEnd; index += 1) {
    const text = JSON.stringify(inputs[index]);
    const size = Buffer.byteLength(text, 'utf8');
    if (texts.length > 0 && bytes + size + 1 > MAX_PART_BYTES) {
      close(index);
      from = index;
      texts = [];
      bytes = 2;
    }
    texts.push(text);
    bytes += size + 1;
  }
  close(chunkEnd);
  return parts;
}

function insertParts(batchId: string, parts: InputPart[]): string {
  return insertStatement(
    'batch_chunks',
    ['batch_id', 'from_index', 'to_index', 'inputs'],
    parts.map((part) => [batchId, part.from, part.to, part.inputs]),
  );
}

function toBatch(row: BatchRow): BatchRecord {
  return {
    ...camelCased(row, ['id', 'user_id', 'scenario_name', 'total', 'chunk_count']),
    createdAt: new Date(row.created_at),
    finishedAt: row.finished_at ? new Date(row.finished_at) : null,
  };
}

/** The held records of these result ids (each once). */
function heldFor(ids: readonly string[], held: readonly HeldRecord[]): HeldRecord[] {
  const stored = new Set(ids);
  return held.filter((record) => stored.delete(record.id));
}
