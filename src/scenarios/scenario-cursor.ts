import { cursorNotIssued } from '../errors/cursor-not-issued.js';

/**
 * The opaque `cursor` of listScenarios: the last listed scenario's id (ids are issued in creation order, so
 * "older than it" is "id below it"), base64url-encoded with a version prefix so the format can change, as
 * listReplays' cursor. It reveals nothing the page did not show: the id is in the page.
 */
const FORMAT = /^s1:([1-9][0-9]{0,9})$/;

export function encodeScenarioCursor(scenarioId: number): string {
  return Buffer.from(`s1:${scenarioId}`, 'utf8').toString('base64url');
}

/** The scenario id a cursor names; 400 naming `query.cursor` for one this service did not issue. */
export function decodeScenarioCursor(cursor: string): number {
  const match = FORMAT.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw cursorNotIssued();
  return Number(match[1]);
}
