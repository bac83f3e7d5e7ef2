import { describe, expect, it } from '@jest/globals';
import { explainValidatorErrors } from '../../src/errors/validator-error-details.js';

const error = (path: string, keyword: string, message: string) => ({
  path,
  message,
  errorCode: `${keyword}.openapi.validation`,
});

describe('explainValidatorErrors', () => {
  it("keeps the errors of the branch the value took, dropping the other branches' type mismatch and the oneOf summary", () => {
    const items = [
      error('/body/testCases/0/variables/0/val', 'additionalProperties', 'must NOT have additional properties'),
      error('/body', 'type', 'must be array'),
      error('/body', 'oneOf', 'must match exactly one schema in oneOf'),
    ];
    expect(explainValidatorErrors(items)).toEqual([items[0]]);
  });

  it('turns the type mismatches of a value that fits no branch into one message', () => {
    const items = [
      error('/body/variables', 'type', 'must be array'),
      error('/body/variables', 'type', 'must be object'),
      error('/body/variables', 'oneOf', 'must match exactly one schema in oneOf'),
    ];
    expect(explainValidatorErrors(items)).toEqual([error('/body/variables', 'type', 'must be array or object')]);
  });

  it('keeps a oneOf summary that has nothing more precise to replace it', () => {
    const items = [error('/body/variables/0', 'oneOf', 'must match exactly one schema in oneOf')];
    expect(explainValidatorErrors(items)).toEqual(items);
  });

  it('leaves errors without alternatives alone', () => {
    const items = [error('/query/limit', 'type', 'must be integer'), error('/body', 'type', 'must be object')];
    expect(explainValidatorErrors(items)).toEqual(items);
  });
});
