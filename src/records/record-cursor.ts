import { BadRequestError } from '../errors/bad-request-error.js';
import type { RecordPosition } from './decision-record-store-type.js';

/**
 * The opaque `cursor` of record lists: a place in a scenario's newest-first order (the last record's
 * start time and insertion number), base64url-encoded with a version prefix so the format can change.
 */
const FORMAT = /^r1:(\d{1,15}):(\d{1,16})$/;

/** 400 naming `query.cursor`: a cursor this service did not issue (the records' and the replays' lists alike). */
export function cursorNotIssued(): BadRequestError {
  return new BadRequestError('The cursor is not one this service issued: pass `nextCursor` of the previous page as it came.', 'VALIDATION_FAILED', [{ path: 'query.cursor', message: 'is not a cursor of this list' }]);
}

export function encodeCursor(position: RecordPosition): string {
  return Buffer.from(`r1:${position.beganAt.getTime()}:${position.seq}`, 'utf8').toString('base64url');
}

/** The place a cursor names; 400 naming `query.cursor` for one this service did not issue. */
export function decodeCursor(cursor: string): RecordPosition {
  const match = FORMAT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const seq = match ? Number(match[2]) : NaN;
  if (!match || !Number.isSafeInteger(seq)) throw cursorNotIssued();
  return { beganAt: new Date(Number(match[1])), seq };
}
