/** MySQL/MariaDB error numbers the service reacts to, and how to read them off a driver error. */
export const ER_DUP_ENTRY = 1062;
export const ER_LOCK_WAIT_TIMEOUT = 1205;
export const ER_NO_SUCH_TABLE = 1146;
export const ER_LOCK_DEADLOCK = 1213;
/** `LOAD DATA LOCAL` refused: MariaDB (and MySQL 5.7) answer ER_NOT_ALLOWED_COMMAND, MySQL 8 ER_CLIENT_LOCAL_FILES_DISABLED. */
export const ER_NOT_ALLOWED_COMMAND = 1148;
export const ER_CLIENT_LOCAL_FILES_DISABLED = 3948;

export function mysqlErrno(error: unknown): number | undefined {
  return typeof error === 'object' && error !== null && typeof (error as { errno?: unknown }).errno === 'number' ? (error as { errno: number }).errno : undefined;
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
