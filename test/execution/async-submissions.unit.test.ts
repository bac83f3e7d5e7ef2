import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { AsyncSubmissions } from '../../src/execution/async-submissions.js';
import type { ExecutionQueue } from '../../src/execution/execution-queue.js';
import { JobStoreUnavailableError } from '../../src/execution/job-store-unavailable-error.js';
import type { NewAsyncRun } from '../../src/execution/run-result-store.js';
import { FakeRunResultStore } from './support/fake-run-result-store.js';

/**
 * Async submissions' rules on the in-memory run store (held to MySqlRunResultStore's contract) and a
 * queue that records its jobs (the job store contract covers the real one: job-store-*.test.ts).
 */
function submissions(failJobs = false) {
  const store = new FakeRunResultStore();
  const jobs: string[][] = [];
  const queue = {
    async enqueueRuns(resultIds: string[]) {
      if (failJobs) throw new JobStoreUnavailableError('Redis at 127.0.0.1:9 is unreachable');
      jobs.push(resultIds);
    },
  } as unknown as ExecutionQueue;
  return { store, jobs, submissions: new AsyncSubmissions(store, queue) };
}

const run = (requestId: string = randomUUID()): NewAsyncRun => ({
  id: randomUUID(),
  userId: 1,
  requestId,
  scenarioName: 's',
  input: { x: 1 },
  callback: null,
});

describe('AsyncSubmissions on the in-memory run store', () => {
  it('stores runs submitted together QUEUED, carried by one job', async () => {
    const { store, jobs, submissions: subject } = submissions();
    const runs = [run(), run(), run()];
    await Promise.all(runs.map((r) => subject.submit(r)));
    expect(jobs.flat().sort()).toEqual(runs.map((r) => r.id).sort());
    expect(jobs.length).toBeLessThan(3);
    expect((await store.findByIds(runs.map((r) => r.id))).map((r) => r.state)).toEqual(['QUEUED', 'QUEUED', 'QUEUED']);
  });

  it('answers 409 REQUEST_ID_TAKEN to a request id the user used, storing nothing for it', async () => {
    const { store, submissions: subject } = submissions();
    const first = run('same');
    await subject.submit(first);
    const again = run('same');
    await expect(subject.submit(again)).rejects.toMatchObject({ status: 409, code: 'REQUEST_ID_TAKEN' });
    expect(await store.findById(again.id)).toBeUndefined();
    expect((await store.findByRequestId(1, 'same'))?.id).toBe(first.id);
  });

  it('answers 503 when the job store does not take the job, and removes the runs again', async () => {
    const { store, submissions: subject } = submissions(true);
    const lost = run();
    await expect(subject.submit(lost)).rejects.toMatchObject({ status: 503 });
    expect(await store.findById(lost.id)).toBeUndefined();
    expect(await store.findByRequestId(1, lost.requestId)).toBeUndefined();
  });
});
