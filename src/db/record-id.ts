/**
 * Record ids are MySQL `INT UNSIGNED` auto-increment values; on the wire they are their decimal
 * strings (the interface types every id as a string). A string that is not such a number cannot
 * name one of our records, so callers treat it exactly like an unknown id (404), never as a 400.
 */
const MAX_RECORD_ID = 4_294_967_295;
const DECIMAL_ID = /^[1-9][0-9]{0,9}$/;

/** The record id a wire id names, or undefined when it cannot be one of ours. */
export function parseRecordId(text: string): number | undefined {
  if (!DECIMAL_ID.test(text)) return undefined;
  const id = Number(text);
  return id <= MAX_RECORD_ID ? id : undefined;
}
