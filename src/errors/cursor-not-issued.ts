import { BadRequestError } from './bad-request-error.js';

/** 400 naming `query.cursor`: a cursor this service did not issue (every paged list: records, replays, scenarios, batch results). */
export function cursorNotIssued(): BadRequestError {
  return new BadRequestError(
    'The cursor is not one this service issued for this list: pass `nextCursor` of the previous page as it came (cursors of another scenario, or issued before the service changed their format, are refused: start the list again).',
    'VALIDATION_FAILED',
    [{ path: 'query.cursor', message: 'is not a cursor of this list' }],
  );
}
