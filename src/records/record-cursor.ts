import { BadRequestError } from '../errors/bad-request-error.js';
import type { RecordPosition } from './decision-record-store-type.js';

/**
 * The opaque `cursor` of record lists: a place in a scenario's newest-first order (the stored page
 * and the slot on it of the last record looked at), base64url-encoded with a version prefix so the
 * format can change (`r1`, start time and row, was the format before records were stored in pages).
 */
const FORMAT = /^r2:(\d{1,16}):(\d{1,6})$/;

/** 400 naming `query.cursor`: a cursor this service did not issue (the records' and the replays' lists alike). */
export function cursorNotIssued(): BadRequestError {
  return new BadRequestError('The cursor is not one this service issued: pass `nextCursor` of the previous page as it came.', 'VALIDATION_FAILED', [{ path: 'query.cursor', message: 'is not a cursor of this list' }]);
}

export function encodeCursor(position: RecordPosition): string {
  return Buffer.from(`r2:${position.page}:${position.slot}`, 'utf8').toString('base64url');
}

/** The place a cursor names; 400 naming `query.cursor` for one this service did not issue. */
export function decodeCursor(cursor: string): RecordPosition {
  const match = FORMAT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const page = match ? Number(match[1]) : NaN;
  if (!match || !Number.isSafeInteger(page)) throw cursorNotIssued();
  return { page, slot: Number(match[2]) };
}
