import { cursorNotIssued } from '../errors/cursor-not-issued.js';

/**
 * The opaque `cursor` of listReplays: the last listed replay's id (replay ids are time-ordered UUIDs,
 * so "older than it" is "id below it"), base64url-encoded with a version prefix so the format can change.
 */
const FORMAT = /^p1:([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

export function encodeReplayCursor(replayId: string): string {
  return Buffer.from(`p1:${replayId}`, 'utf8').toString('base64url');
}

/** The replay id a cursor names; 400 naming `query.cursor` for one this service did not issue. */
export function decodeReplayCursor(cursor: string): string {
  const match = FORMAT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw cursorNotIssued();
  return match[1];
}
