/**
 * A tour is a list of steps against a running service, one or more per operation of the spec; each prints
 * one line. Nothing here knows the API: the tours only use their generated client.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';

export interface TourEnvironment {
  baseUrl: string;
  /** The tour's user (as named in an access-control context). */
  username: string;
  accessToken: string;
  scoreToken: string;
}

export function tourEnvironment(): TourEnvironment {
  const { CONSUMER_BASE_URL, CONSUMER_USERNAME, CONSUMER_ACCESS_TOKEN, CONSUMER_SCORE_TOKEN } = process.env;
  if (!CONSUMER_BASE_URL || !CONSUMER_USERNAME || !CONSUMER_ACCESS_TOKEN || !CONSUMER_SCORE_TOKEN) {
    throw new Error(
      'set CONSUMER_BASE_URL, CONSUMER_USERNAME, CONSUMER_ACCESS_TOKEN and CONSUMER_SCORE_TOKEN (npm run test:consumer does)',
    );
  }
  return {
    baseUrl: CONSUMER_BASE_URL,
    username: CONSUMER_USERNAME,
    accessToken: CONSUMER_ACCESS_TOKEN,
    scoreToken: CONSUMER_SCORE_TOKEN,
  };
}

export class TourFailure extends Error {}

/** Fails the step with `message` unless `condition` holds. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new TourFailure(message);
}

/**
 * Runs the steps in order; prints `ok <step>` or `FAILED <step>: why`, and at the end `steps: <passed> of <total>
 * passed` (the line `npm run test:consumer` reads). A failed step does not end the tour: a later step that needs
 * what it would have made fails on its own check, so one run shows every operation that works. Answers whether all
 * passed.
 */
export async function runTour(title: string, steps: Array<[string, () => Promise<void>]>): Promise<boolean> {
  console.log(`${title}`);
  let passed = 0;
  for (const [name, run] of steps) {
    try {
      await run();
      passed += 1;
      console.log(`  ok      ${name}`);
    } catch (error) {
      console.log(`  FAILED  ${name}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  console.log(`steps: ${passed} of ${steps.length} passed`);
  return passed === steps.length;
}

/** Polls until `done` or `timeoutMs`. */
export async function eventually<T>(
  poll: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let value = await poll();
  while (!done(value) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    value = await poll();
  }
  return value;
}

/** The two applicants of the README tour, and one with input of the wrong types. */
export const APPLICANT = { income: 52000, existingDebt: 4000, age: 34, employment: 'EMPLOYED' };
export const DECLINED_APPLICANT = { income: 9000, existingDebt: 8000, age: 19, employment: 'UNEMPLOYED' };
export const BAD_APPLICANT = { age: 'old', income: 52000, employment: 'RETIRED', colour: 'blue' };
export const CUSTOMERS_CSV = 'customer_id,segment,limit\n1,RETAIL,5000\n2,SME,20000\n';
/** Input declarations for createInputVariablesFromCsv (`required;name;type;description;tags`). */
export const VARIABLES_CSV =
  'required;name;type;description;tags\ntrue;income;DOUBLE;Yearly net income;money\nfalse;employment;EMPLOYED#SELF_EMPLOYED#UNEMPLOYED;;\n';
/** A small PMML model (logistic regression) for the model registry operations. */
export const PMML_MODEL = readFileSync(new URL('../../models/fixtures/logistic-binary.pmml', import.meta.url), 'utf8');

/** A name no other run uses, for the things a tour creates (a copy, a collection, a model). */
export function unique(prefix: string, separator = '-'): string {
  return `${prefix}${separator}${randomUUID().slice(0, 8)}`;
}

/** A statistics window: the last hour up to a minute from now. */
export function lastHour(): { from: string; to: string } {
  const now = Date.now();
  return { from: new Date(now - 3_600_000).toISOString(), to: new Date(now + 60_000).toISOString() };
}

/** `value`, or a failed step saying that `what` is missing (an earlier step did not make it). */
export function need<T>(value: T | undefined | null, what: string): T {
  if (value === undefined || value === null) throw new TourFailure(`no ${what} (an earlier step failed)`);
  return value;
}
