import type { RequestHandler } from 'express';
import type { ResponseCheck } from './operation-validator.js';

/** A JSON answer that breaks the spec (VALIDATE_RESPONSES): the error handler logs it and answers 500. */
class ContractBreakError extends Error {
  constructor(operationId: string, problem: string) {
    super(`${operationId}: ${problem}`);
    this.name = 'ContractBreakError';
  }
}

/**
 * VALIDATE_RESPONSES on the Express lane: the JSON answer of an operation, success or error, checked
 * with a check compiled when the app was built (src/http/operation-validator.ts, the fast lane's
 * checks), never at an operation's first answer on the event loop. A break is thrown to the error
 * handler; its own 500 goes out unchecked (the check runs once per response).
 */
export function checkResponses(operationId: string, check: ResponseCheck): RequestHandler {
  return (_request, response, next) => {
    const json = response.json.bind(response);
    response.json = (body: unknown) => {
      response.json = json;
      const problem = check(response.statusCode, body);
      if (problem) throw new ContractBreakError(operationId, problem);
      return json(body);
    };
    next();
  };
}
