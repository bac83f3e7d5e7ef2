import { BadRequestError } from '../errors/bad-request-error.js';

/**
 * Most test cases one scenario may have (spec: ScenarioImport.testCases). Validate and deploy run them all
 * under one time budget (LIMIT_TEST_CASES_BUDGET_MS); the cap keeps that budget meaningful.
 */
const MAX_TEST_CASES = 200;

/** 400 TOO_MANY_TEST_CASES when `count` is above the cap; `path` names where they came from. */
export function assertTestCaseCount(scenarioName: string, count: number, path: string): void {
  if (count <= MAX_TEST_CASES) return;
  throw new BadRequestError(
    `Scenario "${scenarioName}" has ${count} test cases; at most ${MAX_TEST_CASES} are allowed. Remove or merge some.`,
    'TOO_MANY_TEST_CASES',
    [{ path, message: `at most ${MAX_TEST_CASES} test cases, got ${count}` }],
  );
}
