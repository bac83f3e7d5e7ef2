/** MySQL/MariaDB error numbers the service reacts to, and how to read them off a driver error. */
export const ER_DUP_ENTRY = 1062;
export const ER_LOCK_WAIT_TIMEOUT = 1205;
export const ER_NO_SUCH_TABLE = 1146;
export const ER_LOCK_DEADLOCK = 1213;
/** `LOAD DATA LOCAL` refused: MariaDB (and MySQL 5.7) answer ER_NOT_ALLOWED_COMMAND, MySQL 8 ER_CLIENT_LOCAL_FILES_DISABLED. */
export const ER_NOT_ALLOWED_COMMAND = 1148;
export const ER_CLIENT_LOCAL_FILES_DISABLED = 3948;

export function mysqlErrno(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { errno?: unknown }).errno === 'number'
    ? (error as { errno: number }).errno
    : undefined;
}

/** A unique index refused the write (a name, request id or key already taken). */
export function isDuplicateKey(error: unknown): boolean {
  return mysqlErrno(error) === ER_DUP_ENTRY;
}

/**
 * MySQL is unreachable or the connection broke (refused, reset, lost, timed out, or no pooled
 * connection within the acquire time-out): not the request's fault, and worth trying again later.
 * mysql2 marks every error that ends its connection `fatal`; knex's pool throws KnexTimeoutError.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { fatal, name } = error as { fatal?: unknown; name?: unknown };
  // A statement larger than max_allowed_packet: the server closes the connection (so the error is
  // fatal), but it refused that statement, it is not down; the same write in smaller parts goes through.
  if (isPacketTooLarge(error)) return false;
  return fatal === true || name === 'KnexTimeoutError';
}

/** ER_NET_PACKET_TOO_LARGE (1153): a statement or value larger than the server's max_allowed_packet. */
export function isPacketTooLarge(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { errno, code } = error as { errno?: unknown; code?: unknown };
  return errno === 1153 || code === 'ER_NET_PACKET_TOO_LARGE';
}

/** Longest reason safeErrorReason answers (a script's error message can be long too). */
const MAX_REASON_CHARS = 1000;

/**
 * What an error says, for logs and stored reasons, without what a statement carried: mysql2 (and knex
 * around it) start a query error's message with the whole SQL, inputs and results included (a replay's
 * report made one log line of 57 MB). A database error is told by its code and the server's message;
 * any other by its message, cut to MAX_REASON_CHARS.
 */
export function safeErrorReason(error: unknown): string {
  if (typeof error !== 'object' || error === null) return String(error).slice(0, MAX_REASON_CHARS);
  const { code, sqlMessage, message } = error as { code?: unknown; sqlMessage?: unknown; message?: unknown };
  const prefix = typeof code === 'string' ? `${code}: ` : '';
  if (typeof sqlMessage === 'string') return `${prefix}${sqlMessage}`.slice(0, MAX_REASON_CHARS);
  let text = typeof message === 'string' ? message : String(error);
  // A driver error without a server message (a broken connection): knex put the statement before
  // ` - ` and the driver's own message after it.
  if (typeof code === 'string' && ('fatal' in error || 'errno' in error || 'sql' in error)) {
    const cut = text.lastIndexOf(' - ');
    text = `${prefix}${cut >= 0 ? text.slice(cut + 3) : text}`;
  }
  return text.length > MAX_REASON_CHARS ? `${text.slice(0, MAX_REASON_CHARS)}… [cut: ${text.length} characters]` : text;
}
