import { safeErrorReason } from '../db/mysql-errors.js';
import type { RunError, RunOutcome } from './run-outcome.js';

/**
 * The bounds of a stored run's outcome (run_results), applied before every write of one, so that no
 * outcome can fail its write: the write of an outcome too large for its column failed, and with it
 * every other run of the same multi-row statement, other tenants' included (issue 27).
 *
 * - `error_message` is TEXT (65,535 bytes): a message keeps at most ERROR_MESSAGE_MAX_BYTES, cut
 *   with the marker ` … [cut to 8192 of 74123 bytes]` at its end.
 * - `error_details` is TEXT too: the error's other fields (node, violations, diagnostics) keep at
 *   most ERROR_DETAILS_MAX_BYTES of JSON. Each string in them keeps at most DETAIL_STRING_MAX_BYTES
 *   (an input's name is the client's: one key can be 70 KB long); of a list (`violations`,
 *   `diagnostics`) the first items that fit are kept and `<list>Omitted` counts the others. Details
 *   that still do not fit keep only the node and `detailsOmitted: true`.
 * - `result` is LONGTEXT, but the statement that writes it must fit max_allowed_packet (16 MiB by
 *   default on MariaDB), and its JSON goes as a hexadecimal literal (twice its bytes): a result of more
 *   than RESULT_MAX_BYTES of JSON is stored as a FAILED run, `RESULT_TOO_LARGE`, naming its size.
 */
const ERROR_MESSAGE_MAX_BYTES = 8192;
export const ERROR_DETAILS_MAX_BYTES = 32_768;
const DETAIL_STRING_MAX_BYTES = 512;
export const RESULT_MAX_BYTES = 4 * 1024 * 1024;

/** The error code of a run whose outcome could not be written (the database refused its row); see replacementOutcome. */
const RESULT_NOT_STORED = 'RESULT_NOT_STORED';

/** The error fields kept in columns of their own; the rest is error_details. */
const NODE_FIELDS = ['nodeId', 'nodeName', 'nodeType'] as const;

/** A finished run's outcome as its row holds it: JSON texts within their bounds. */
export interface StoredOutcomeTexts {
  state: 'SUCCEEDED' | 'FAILED';
  result: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: string | null;
}

/** The texts of `outcome` as stored, every one within its bound (a result too large becomes RESULT_TOO_LARGE). */
export function storedOutcomeTexts(outcome: RunOutcome): StoredOutcomeTexts {
  if (outcome.state === 'SUCCEEDED') {
    const result = JSON.stringify(outcome.result);
    const bytes = Buffer.byteLength(result, 'utf8');
    if (bytes <= RESULT_MAX_BYTES)
      return { state: 'SUCCEEDED', result, errorCode: null, errorMessage: null, errorDetails: null };
    return storedErrorTexts({
      code: 'RESULT_TOO_LARGE',
      message: `The run's result takes ${bytes} bytes of JSON; a stored run keeps at most ${RESULT_MAX_BYTES}.`,
    });
  }
  return storedErrorTexts(outcome.error);
}

function storedErrorTexts(error: RunError): StoredOutcomeTexts {
  const { code, message, ...details } = error;
  return {
    state: 'FAILED',
    result: null,
    errorCode: cutBytes(String(code), 64, ''),
    errorMessage: cutWithMarker(String(message ?? ''), ERROR_MESSAGE_MAX_BYTES),
    errorDetails: boundedDetails(details),
  };
}

/**
 * The outcome stored instead of one whose row the database refused (it passed the bounds above, so
 * something else about it is wrong: a value the column's type or the schema does not take). It holds
 * only what the service wrote itself, so that the run still ends, FAILED, with the reason.
 */
export function replacementOutcome(outcome: RunOutcome, reason: string): RunOutcome {
  return {
    state: 'FAILED',
    result: null,
    error: {
      code: RESULT_NOT_STORED,
      message: cutWithMarker(
        `The run ended ${outcome.state} but its outcome could not be stored (${reason}).`,
        ERROR_MESSAGE_MAX_BYTES,
      ),
    },
    version: null,
    beganAt: outcome.beganAt,
    endedAt: outcome.endedAt,
  };
}

/** What a database error says about the row, for RESULT_NOT_STORED: never the statement (safeErrorReason). */
export function databaseErrorReason(error: unknown): string {
  return cutBytes(safeErrorReason(error), 512, '…');
}

/** `text` cut to at most `maxBytes` bytes of UTF-8, its end replaced by ` … [cut to <kept> of <total> bytes]`. */
export function cutWithMarker(text: string, maxBytes: number): string {
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return text;
  const marker = ` … [cut to ${maxBytes} of ${total} bytes]`;
  const kept = cutBytes(text, maxBytes - Buffer.byteLength(marker, 'utf8'), '');
  // A cut inside a multi-byte character keeps a few bytes fewer: pad so the marker's number stays true.
  return `${kept}${' '.repeat(maxBytes - Buffer.byteLength(kept, 'utf8') - Buffer.byteLength(marker, 'utf8'))}${marker}`;
}

/** The longest start of `text` of at most `maxBytes` UTF-8 bytes (never half a character), then `suffix` when cut. */
function cutBytes(text: string, maxBytes: number, suffix: string): string {
  if (Buffer.byteLength(text, 'utf8') <= maxBytes) return text;
  const budget = Math.max(0, maxBytes - Buffer.byteLength(suffix, 'utf8'));
  // Decoding a cut buffer may end in U+FFFD (half a character): drop it.
  let kept = Buffer.from(text, 'utf8').subarray(0, budget).toString('utf8');
  if (kept.endsWith('\uFFFD') && !text.startsWith(kept)) kept = kept.slice(0, -1);
  return `${kept}${suffix}`;
}

/** error_details: the error's fields beyond code and message as JSON of at most ERROR_DETAILS_MAX_BYTES, or null. */
function boundedDetails(details: Record<string, unknown>): string | null {
  if (Object.keys(details).length === 0) return null;
  const bounded: Record<string, unknown> = {};
  const lists: string[] = [];
  for (const [key, value] of Object.entries(details)) {
    if (Array.isArray(value)) lists.push(key);
    else bounded[key] = boundStrings(value);
  }
  let text = JSON.stringify(bounded);
  let bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > ERROR_DETAILS_MAX_BYTES) return nodeOnly(details);
  for (const key of lists) {
    const items = details[key] as unknown[];
    const kept: unknown[] = [];
    // Room for `"key":[…],"keyOmitted":123456,` around the items.
    let room = ERROR_DETAILS_MAX_BYTES - bytes - Buffer.byteLength(key, 'utf8') * 2 - 32;
    for (const item of items) {
      const itemText = JSON.stringify(boundStrings(item)) ?? 'null';
      const size = Buffer.byteLength(itemText, 'utf8') + 1;
      if (size > room) break;
      kept.push(JSON.parse(itemText) as unknown);
      room -= size;
    }
    bounded[key] = kept;
    if (kept.length < items.length) bounded[`${key}Omitted`] = items.length - kept.length;
    text = JSON.stringify(bounded);
    bytes = Buffer.byteLength(text, 'utf8');
  }
  return bytes <= ERROR_DETAILS_MAX_BYTES ? text : nodeOnly(details);
}

/** Details too large even with their lists cut: the failing node alone, and the mark that the rest was left out. */
function nodeOnly(details: Record<string, unknown>): string {
  const kept: Record<string, unknown> = {};
  for (const field of NODE_FIELDS) if (field in details) kept[field] = boundStrings(details[field]);
  kept.detailsOmitted = true;
  return JSON.stringify(kept);
}

/** `value` with every string in it cut to DETAIL_STRING_MAX_BYTES (marked), object keys included. */
function boundStrings(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cutWithMarker(value, DETAIL_STRING_MAX_BYTES);
  if (value === null || typeof value !== 'object' || depth > 16) return depth > 16 ? null : value;
  if (Array.isArray(value)) return value.map((item) => boundStrings(item, depth + 1));
  const bounded: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value as Record<string, unknown>))
    bounded[cutWithMarker(key, DETAIL_STRING_MAX_BYTES)] = boundStrings(item, depth + 1);
  return bounded;
}
