import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Agenda } from 'agenda';
import {
  AGENDA_VERSION_RELIED_ON,
  isProcessingJobs,
  lockedJobCount,
  lookForJobsNow,
} from '../../src/execution/agenda-internals.js';
import { openJobStore, type JobStore } from '../../src/execution/job-store.js';
import { applyTestEnvironment } from '../support/test-environment.js';
import { waitFor } from './support.js';

/**
 * The contract of src/execution/agenda-internals.ts with the installed Agenda: each private
 * member it reaches must still exist and still do what the module says. When an Agenda upgrade
 * breaks one, this fails here, by name, instead of workers silently waiting for their polls.
 */
const JOB = 'contract.job';
const opened: Array<{ agenda: Agenda; store: JobStore }> = [];

/**
 * An Agenda on the test Redis, under a prefix of its own, with no notification channel and a poll
 * seconds away: a job saved after start runs only at that poll or when told to. (Agenda keeps a
 * timer of half the poll interval after each job, so the interval stays short enough for jest.)
 */
async function quietAgenda(): Promise<Agenda> {
  applyTestEnvironment();
  const store = await openJobStore(
    process.env.JOBS_URL as string,
    `scoring:test:agenda-contract:${randomUUID().slice(0, 8)}:`,
    { onLost() {}, onRestored() {}, onError() {} },
  );
  const { backend } = store;
  const agenda = new Agenda({
    backend: {
      name: backend.name,
      repository: backend.repository,
      ownsConnection: false,
      connect: async () => undefined,
      disconnect: async () => undefined,
    },
    processEvery: 5000,
    defaultLockLifetime: 2000,
    defaultLockLimit: 2,
    defaultConcurrency: 2,
    removeOnComplete: true,
  });
  await agenda.ready;
  opened.push({ agenda, store });
  return agenda;
}

afterEach(async () => {
  for (const { agenda, store } of opened.splice(0)) {
    await agenda.drain({ timeout: 1000, closeConnection: false });
    await store.close();
  }
});

const readJson = (path: string) =>
  JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8')) as Record<string, any>;

describe('Agenda', () => {
  it('is installed in the exact version the internals module was written against, pinned with its backends in package.json and the lockfile', async () => {
    const agenda = await quietAgenda();
    await agenda.start();
    expect((await agenda.getRunningStats()).version).toBe(AGENDA_VERSION_RELIED_ON);
    const manifest = readJson('package.json');
    const lock = readJson('package-lock.json');
    expect(manifest.dependencies.agenda).toBe(AGENDA_VERSION_RELIED_ON);
    for (const name of [
      'agenda',
      '@agendajs/redis-backend',
      '@agendajs/mongo-backend',
      '@agendajs/postgres-backend',
      'ioredis',
    ]) {
      expect(manifest.dependencies[name]).toMatch(/^\d+\.\d+\.\d+$/);
      expect(lock.packages[''].dependencies[name]).toBe(manifest.dependencies[name]);
      expect(lock.packages[`node_modules/${name}`].version).toBe(manifest.dependencies[name]);
    }
  });

  it('exposes whether it processes jobs: not before start, yes after, not after drain', async () => {
    const agenda = await quietAgenda();
    agenda.define(JOB, async () => undefined);
    expect(isProcessingJobs(agenda)).toBe(false);
    await agenda.start();
    expect(isProcessingJobs(agenda)).toBe(true);
    await agenda.drain({ timeout: 1000, closeConnection: false });
    expect(isProcessingJobs(agenda)).toBe(false);
    expect(lockedJobCount(agenda, JOB)).toBeUndefined();
  });

  it('counts the jobs of a name this process holds locked, and releases the count when they complete', async () => {
    const agenda = await quietAgenda();
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    agenda.define(JOB, () => held);
    await agenda.start();
    expect(lockedJobCount(agenda, JOB)).toBe(0);
    await agenda.now(JOB, {});
    await lookForJobsNow(agenda, JOB);
    await waitFor(async () => (lockedJobCount(agenda, JOB) === 1 ? true : undefined), 5000);
    release();
    await waitFor(async () => (lockedJobCount(agenda, JOB) === 0 ? true : undefined), 5000);
  });

  it('runs a due job at once when told to look, where it would otherwise wait for its next poll', async () => {
    const agenda = await quietAgenda();
    const ran: number[] = [];
    agenda.define(JOB, async () => {
      ran.push(Date.now());
    });
    await agenda.start();
    // Let start()'s own first scan finish: the job saved next is found only by the poll (5 s away) or by being told.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await agenda.now(JOB, {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(ran).toHaveLength(0);
    const toldAt = Date.now();
    await lookForJobsNow(agenda, JOB);
    await waitFor(async () => (ran.length === 1 ? true : undefined), 5000, 10);
    expect(ran[0] - toldAt).toBeLessThan(2000);
  });
});
