import { ER_LOCK_DEADLOCK, mysqlErrno } from './mysql-errors.js';

/** Tries of one transaction that MariaDB keeps picking as a deadlock victim (it rolled the transaction back each time). */
const DEADLOCK_ATTEMPTS = 3;

/**
 * Runs `transaction` again when MariaDB broke a deadlock by rolling it back ("try restarting
 * transaction"): the other request has gone ahead, and the same work usually succeeds at once.
 * `transaction` must be a whole transaction (begun and ended inside), so that a retry starts clean.
 */
export async function retryOnDeadlock<T>(transaction: () => Promise<T>, attempts = DEADLOCK_ATTEMPTS): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await transaction();
    } catch (error) {
      if (mysqlErrno(error) !== ER_LOCK_DEADLOCK || attempt >= attempts) throw error;
    }
  }
}
