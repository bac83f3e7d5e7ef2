/**
 * Every stable error code the API answers with. The spec's `ErrorCode` enum lists the same values
 * (a test keeps them equal). Codes never change meaning once released.
 */
export const ERROR_CODES = [
  // generic request problems
  'VALIDATION_FAILED',
  'MALFORMED_BODY',
  'PAYLOAD_TOO_LARGE',
  'NESTING_TOO_DEEP',
  'HEADERS_TOO_LARGE',
  'MALFORMED_REQUEST',
  'REQUEST_TIMEOUT',
  'ROUTE_NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'UNSUPPORTED_MEDIA_TYPE',
  'NOT_ACCEPTABLE',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
  'DATABASE_UNAVAILABLE',
  'JOB_STORE_UNAVAILABLE',
  // authentication and access
  'UNAUTHENTICATED',
  'INVALID_SCORE_TOKEN',
  'FORBIDDEN',
  'CONTEXT_MISMATCH',
  // scenarios
  'SCENARIO_NOT_FOUND',
  'SCENARIO_NOT_DEPLOYED',
  'NAME_TAKEN',
  'INVALID_SCENARIO',
  'COMPILE_ERROR',
  'VALIDATION_ERRORS',
  'TEST_CASE_NOT_FOUND',
  'TOO_MANY_TEST_CASES',
  'INVALID_CSV',
  'NO_DEVELOP_VERSION',
  // execution
  'INVALID_INPUT',
  'RUN_FAILED',
  'REQUEST_ID_TAKEN',
  'RESULT_NOT_FOUND',
  'BATCH_NOT_FOUND',
  'BATCH_TOO_LARGE',
  'CALLBACK_REFUSED',
  // internal data
  'COLLECTION_NOT_FOUND',
  'INVALID_COLLECTION_NAME',
  'INVALID_INDEXES',
  'COLUMNS_MISMATCH',
  'UNIQUE_VIOLATION',
  'LOAD_CONFLICT',
  // decision records
  'RECORD_NOT_FOUND',
  // replay
  'VERSION_NOT_FOUND',
  'REPLAY_NOT_FOUND',
  'REPLAY_NOT_FINISHED',
  'REPLAY_LIMIT_REACHED',
  'REPLAY_CONTENT_MISMATCH',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
