import { cursorNotIssued } from '../errors/cursor-not-issued.js';

/** Where a page of listBatches ended: the last listed batch's creation time (milliseconds) and id. */
export interface BatchPosition {
  createdAt: Date;
  id: string;
}

/**
 * The opaque `cursor` of listBatches, base64url-encoded with a version prefix so the format can change.
 * Batches are listed by (created_at, id), newest first: ids made before ids were time-ordered are
 * random (version 4), so the id alone does not order them; it only breaks ties of one millisecond.
 */
const FORMAT = /^b1:(\d{1,15}):([0-9A-Za-z-]{1,36})$/;

export function encodeBatchCursor(position: BatchPosition): string {
  return Buffer.from(`b1:${position.createdAt.getTime()}:${position.id}`, 'utf8').toString('base64url');
}

/** The position a cursor names; 400 naming `query.cursor` for one this service did not issue. */
export function decodeBatchCursor(cursor: string): BatchPosition {
  const match = FORMAT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw cursorNotIssued();
  return { createdAt: new Date(Number(match[1])), id: match[2] };
}
