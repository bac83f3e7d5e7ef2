import type { components } from '../../generated/api-types.js';
import { storedVariable, type TestCaseVariable } from './scenario-types.js';

export type TestCaseVariablesDto = components['schemas']['TestCaseVariables'];

/**
 * A test case's input values as sent (a map name → value, or a list of `{variableName | name, value}`)
 * in the form they are stored: the list, in the order given. The spec has already checked the shape.
 */
export function storedTestCaseVariables(variables: TestCaseVariablesDto): TestCaseVariable[] {
  if (!Array.isArray(variables)) return Object.entries(variables).map(([name, value]) => ({ name, value }));
  return variables.map(storedVariable);
}
