import { randomUUID } from 'node:crypto';
import type { Knex } from 'knex';
import { groupsWithin } from '../db/statement-groups.js';
import type { RunError, RunOutcome } from './run-outcome.js';
import { outcomeColumns, parseObject, storedError } from './run-columns.js';

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
 * Inputs are stored in parts of at most this many bytes of JSON, and inserted in statements of at
 * most this size: well below MySQL's max_allowed_packet (16 MiB by default on MariaDB, 64 MiB on
 * MySQL 8), whatever the size of the elements.
 */
const MAX_PART_BYTES = 4 * 1024 * 1024;

/**
 * Knex queries on batches, batch_chunks and the run_results rows of batch elements. A batch's
 * inputs are stored per chunk (one row, or a few when large, per range of elements), and each
 * element's result row is inserted once it finished, many per statement: a batch of N elements
 * costs about N/500 input rows and N result rows, and no updates of element rows.
 */
export class BatchStore {
  constructor(private readonly db: Knex) {}

  /** The batch and its inputs, in one transaction. */
  async insertBatch(batch: NewBatch): Promise<void> {
    const rows = chunkRows(batch);
    await this.db.transaction(async (trx) => {
      await trx('batches').insert({ id: batch.id, user_id: batch.userId, scenario_name: batch.scenarioName, total: batch.inputs.length, chunk_count: Math.ceil(batch.inputs.length / batch.chunkSize) });
      for (const statement of groupsWithin(rows, (row) => row.inputs.length, MAX_PART_BYTES)) await trx('batch_chunks').insert(statement);
    });
  }

  /** Undoes insertBatch (its chunks and results go with it) when its jobs could not be saved. */
  async deleteBatch(id: string): Promise<void> {
    await this.db('batches').where({ id }).delete();
  }

  async findBatch(id: string): Promise<BatchRecord | undefined> {
    const row = (await this.db('batches').where({ id }).first()) as BatchRow | undefined;
    return row ? toBatch(row) : undefined;
  }

  /** The unfinished parts whose first element lies in [from, to), in element order. */
  async unfinishedParts(range: ChunkRange): Promise<ChunkPart[]> {
    const rows = (await this.inRange(range).whereNull('finished_at').orderBy('from_index')
      .select('from_index', 'to_index', 'inputs', 'started_at')) as Array<{ from_index: number; to_index: number; inputs: string; started_at: Date | null }>;
    return rows.map((row) => ({ from: row.from_index, to: row.to_index, inputs: JSON.parse(row.inputs) as Record<string, unknown>[], started: row.started_at !== null }));
  }

  async markStarted(range: ChunkRange): Promise<void> {
    await this.inRange(range).whereNull('started_at').update({ started_at: this.db.fn.now(3) });
  }

  /** Indexes in [from, to) whose result is already stored (a chunk resumed after its worker died or stopped). */
  async storedIndexes(range: ChunkRange): Promise<Set<number>> {
    const rows = (await this.db('run_results').where('batch_id', range.batchId).andWhere('element_index', '>=', range.from).andWhere('element_index', '<', range.to)
      .select('element_index')) as Array<{ element_index: number }>;
    return new Set(rows.map((row) => row.element_index));
  }

  /**
   * Stores finished elements, one multi-row insert, each under its result id. An element stored
   * already (the same chunk run twice at once: a lock taken over from a worker that was only slow)
   * keeps its first result: the unique (batch_id, element_index) turns the second into a no-op.
   */
  async insertResults(batch: BatchRecord, results: ElementOutcome[]): Promise<void> {
    if (results.length === 0) return;
    const rows = results.map(({ index, outcome, resultId }) => {
      const id = resultId ?? randomUUID();
      return { id, user_id: batch.userId, request_id: id, scenario_name: batch.scenarioName, batch_id: batch.id, element_index: index, ...outcomeColumns(outcome) };
    });
    await this.db('run_results').insert(rows).onConflict().merge({ id: this.db.raw('??', ['id']) });
  }

  async markPartFinished(batchId: string, from: number): Promise<void> {
    await this.db('batch_chunks').where({ batch_id: batchId, from_index: from }).update({ finished_at: this.db.fn.now(3) });
  }

  /**
   * Marks the batch finished when none of its parts is unfinished; true when this call did.
   * Every chunk job calls it after its own parts: the last one to finish sees no unfinished part.
   */
  async finishIfComplete(batchId: string): Promise<boolean> {
    const updated = await this.db('batches').where({ id: batchId }).whereNull('finished_at')
      .whereNotExists((query) => query.select(this.db.raw('1')).from('batch_chunks').where('batch_id', batchId).whereNull('finished_at'))
      .update({ finished_at: this.db.fn.now(3) });
    return updated > 0;
  }

  async progress(batchId: string): Promise<BatchProgress> {
    const [counts, started] = await Promise.all([
      this.db('run_results').where('batch_id', batchId).groupBy('state').select('state').count({ n: '*' }) as unknown as Promise<Array<{ state: string; n: number | string }>>,
      this.db('batch_chunks').where('batch_id', batchId).whereNotNull('started_at').first(this.db.raw('1 AS started')) as Promise<unknown>,
    ]);
    const count = (state: string) => Number(counts.find((row) => row.state === state)?.n ?? 0);
    return { succeeded: count('SUCCEEDED'), failed: count('FAILED'), started: started !== undefined };
  }

  /**
   * Elements of all unfinished batches (every user's) whose results are not stored yet: the
   * metrics' scrape-time gauge. Reads the unfinished batches by their finished_at index and counts
   * their stored results on (batch_id, element_index).
   */
  async pendingElements(): Promise<number> {
    const [submitted, stored] = await Promise.all([
      this.db('batches').whereNull('finished_at').sum({ n: 'total' }).first() as Promise<{ n: string | number | null } | undefined>,
      this.db('run_results as r').join('batches as b', 'b.id', 'r.batch_id').whereNull('b.finished_at').count({ n: '*' }).first() as Promise<{ n: string | number } | undefined>,
    ]);
    return Number(submitted?.n ?? 0) - Number(stored?.n ?? 0);
  }

  async resultIds(batchId: string): Promise<string[]> {
    const rows = (await this.db('run_results').where('batch_id', batchId).orderBy('element_index').select('id')) as Array<{ id: string }>;
    return rows.map((row) => row.id);
  }

  /**
   * Every stored element result in element order, `pageSize` per query (keyset pages on
   * (batch_id, element_index)): no connection is held between pages, however slowly they are read.
   */
  async *results(batchId: string, pageSize: number): AsyncGenerator<BatchElementResult[]> {
    let after = -1;
    for (;;) {
      const rows = (await this.db('run_results').where('batch_id', batchId).andWhere('element_index', '>', after).orderBy('element_index').limit(pageSize)
        .select('id', 'element_index', 'state', 'result', 'error_code', 'error_message', 'error_details')) as ResultRow[];
      if (rows.length === 0) return;
      yield rows.map((row) => ({ index: row.element_index, resultId: row.id, state: row.state, result: row.state === 'SUCCEEDED' ? parseObject(row.result) : null, error: storedError(row) }));
      if (rows.length < pageSize) return;
      after = rows[rows.length - 1].element_index;
    }
  }

  /** Parts never started and queued before `cutoff` (the API process may have died before saving their job). */
  async stalledChunks(cutoff: Date, limit: number): Promise<ChunkRange[]> {
    const rows = (await this.db('batch_chunks').whereNull('started_at').andWhere('queued_at', '<', cutoff).whereNull('finished_at').limit(limit)
      .select('batch_id', 'from_index', 'to_index')) as Array<{ batch_id: string; from_index: number; to_index: number }>;
    return rows.map((row) => ({ batchId: row.batch_id, from: row.from_index, to: row.to_index }));
  }

  /** Claims a stalled part for re-queuing (moves its queued_at); false when another sweeper was first. */
  async claimStalled(cutoff: Date, chunk: ChunkRange): Promise<boolean> {
    const claimed = await this.db('batch_chunks').where({ batch_id: chunk.batchId, from_index: chunk.from }).whereNull('started_at').andWhere('queued_at', '<', cutoff)
      .update({ queued_at: this.db.fn.now(3) });
    return claimed > 0;
  }

  private inRange(range: ChunkRange): Knex.QueryBuilder {
    return this.db('batch_chunks').where('batch_id', range.batchId).andWhere('from_index', '>=', range.from).andWhere('from_index', '<', range.to);
  }
}

/** Chunk rows of `chunkSize` elements each, a chunk split further where its JSON would pass MAX_PART_BYTES. */
function chunkRows(batch: NewBatch): Array<{ batch_id: string; from_index: number; to_index: number; inputs: string }> {
  const rows: Array<{ batch_id: string; from_index: number; to_index: number; inputs: string }> = [];
  for (let chunkStart = 0; chunkStart < batch.inputs.length; chunkStart += batch.chunkSize) {
    const chunkEnd = Math.min(chunkStart + batch.chunkSize, batch.inputs.length);
    let from = chunkStart;
    let texts: string[] = [];
    let bytes = 2;
    for (let index = chunkStart; index < chunkEnd; index += 1) {
      const text = JSON.stringify(batch.inputs[index]);
      if (texts.length > 0 && bytes + text.length + 1 > MAX_PART_BYTES) {
        rows.push({ batch_id: batch.id, from_index: from, to_index: index, inputs: `[${texts.join(',')}]` });
        from = index;
        texts = [];
        bytes = 2;
      }
      texts.push(text);
      bytes += text.length + 1;
    }
    rows.push({ batch_id: batch.id, from_index: from, to_index: chunkEnd, inputs: `[${texts.join(',')}]` });
  }
  return rows;
}

function toBatch(row: BatchRow): BatchRecord {
  return {
    id: row.id,
    userId: row.user_id,
    scenarioName: row.scenario_name,
    total: row.total,
    chunkCount: row.chunk_count,
    createdAt: new Date(row.created_at),
    finishedAt: row.finished_at ? new Date(row.finished_at) : null,
  };
}
