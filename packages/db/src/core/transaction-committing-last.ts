import type { Sql, TransactionSql } from './database.js';

/** What the body of `transactionCommittingLast` hands back. */
type TransactionEnd<T> = {
  result: T;
  /**
   * Statements sent last and not waited for, so they go out with the COMMIT: one round trip for
   * all of them. Each must be a single statement already issued (an async helper with one
   * `await tx…`): a second statement would follow the COMMIT, outside the transaction.
   */
  last: readonly Promise<unknown>[];
};

/**
 * `sql.begin`, one round trip shorter: the body's last statements are not awaited before the
 * COMMIT (sql.begin waits for the body, then sends COMMIT), so they share its round trip. A batch
 * that an ingest request waits for spends most of its time in round trips.
 *
 * PostgreSQL answers a COMMIT in a failed transaction with ROLLBACK, not an error, and postgres.js
 * does not check the answer: so once the transaction ended, the last statements are checked, and
 * the first one that failed is thrown (the transaction rolled back; the others after it only
 * found it failed). `sql.begin` keeps its own handling of a connection that dies.
 */
export async function transactionCommittingLast<T>(
  sql: Sql,
  body: (tx: TransactionSql) => Promise<TransactionEnd<T>>,
): Promise<T> {
  let last: readonly Promise<unknown>[] = [];
  const result = await sql.begin(async (tx) => {
    const end = await body(tx);
    last = end.last;
    // Checked below; until then a failure must not be reported as unhandled.
    for (const statement of last) statement.catch(() => undefined);
    return end.result;
  });
  const outcomes = await Promise.allSettled(last);
  const failed = outcomes.find((outcome) => outcome.status === 'rejected');
  if (failed !== undefined) throw failed.reason;
  return result as T;
}
