/**
 * A tour is a list of steps against a running service; each prints one line, and the first failure
 * ends the tour (later steps build on earlier ones). Nothing here knows the API: the tours only use
 * their generated client.
 */
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
    throw new Error('set CONSUMER_BASE_URL, CONSUMER_USERNAME, CONSUMER_ACCESS_TOKEN and CONSUMER_SCORE_TOKEN (npm run test:consumer does)');
  }
  return { baseUrl: CONSUMER_BASE_URL, username: CONSUMER_USERNAME, accessToken: CONSUMER_ACCESS_TOKEN, scoreToken: CONSUMER_SCORE_TOKEN };
}

export class TourFailure extends Error {}

/** Fails the step with `message` unless `condition` holds. */
export function check(condition: boolean, message: string): asserts condition {
  if (!condition) throw new TourFailure(message);
}

/** Runs the steps in order; prints `ok <step>` or `FAILED <step>: why`, then `not reached` for the rest. Answers whether all passed. */
export async function runTour(title: string, steps: Array<[string, () => Promise<void>]>): Promise<boolean> {
  console.log(`${title}`);
  for (const [index, [name, run]] of steps.entries()) {
    try {
      await run();
      console.log(`  ok      ${name}`);
    } catch (error) {
      console.log(`  FAILED  ${name}: ${error instanceof Error ? error.message : String(error)}`);
      for (const [rest] of steps.slice(index + 1)) console.log(`  not reached  ${rest}`);
      return false;
    }
  }
  return true;
}

/** Polls until `done` or `timeoutMs`. */
export async function eventually<T>(poll: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
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
