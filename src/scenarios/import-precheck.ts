import type { RequestHandler } from 'express';
import { importDocumentProblems, invalidScenario } from './import-document.js';

/**
 * Mounted on importScenarios before the spec's request validation: a scenario document that breaks
 * the document schemas is answered 400 INVALID_SCENARIO naming scenario, node and field (see
 * importDocumentProblems for why the generic validation cannot), and nothing is imported. Bodies
 * that are not shaped like scenarios at all pass on, for the spec's validation to report.
 */
export const importPrecheck: RequestHandler = (request, _response, next) => {
  const problems = importDocumentProblems(request.body);
  next(problems && problems.length > 0 ? invalidScenario(problems) : undefined);
};
