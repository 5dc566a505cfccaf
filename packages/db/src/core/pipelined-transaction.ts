import type { Sql } from './database.js';
import type postgres from 'postgres';

/** A postgres.js query function bound to one connection of the pool, in a transaction. */
type PipelinedTransactionSql = postgres.ReservedSql;

/** What the body of a pipelined transaction hands back. */
type TransactionEnd<T> = {
  result: T;
  /**
   * Statements sent last, not waited for: they go out with the COMMIT. If one fails, the
   * transaction rolls back and its error is thrown. Issue them just before the body returns:
   * one that failed while the body still awaited something else would be an unhandled rejection.
   */
  last: readonly Promise<unknown>[];
};

/**
 * A transaction two round trips shorter than postgres.js' `sql.begin`, which waits for its BEGIN
 * before the first statement and for the last statement before its COMMIT. Here the BEGIN goes
 * out with the body's first statements and the COMMIT with its last ones: one write, one answer.
 * A batch that waits for its commit (an ingest request waits for its batch) spends most of its
 * time in round trips, so each one saved is a request answered sooner.
 *
 * The body's first statements run behind the BEGIN on the same connection; `begun` settles with
 * the BEGIN, and the body awaits it together with them (`Promise.all([begun, …])`) before
 * anything else: a BEGIN that failed (the connection broke) fails the body there.
 *
 * PostgreSQL answers a COMMIT in a failed transaction with ROLLBACK, not an error, and postgres.js
 * does not check the answer: so the statements in `last` are checked, and so is the COMMIT's
 * answer. A transaction that failed in any way (a statement's error caught by the body included)
 * is rolled back and thrown.
 */
export async function pipelinedTransaction<T>(
  sql: Sql,
  body: (tx: PipelinedTransactionSql, begun: Promise<unknown>) => Promise<TransactionEnd<T>>,
): Promise<T> {
  const tx = await sql.reserve();
  try {
    const begun = tx`begin`;
    // Awaited by the body; until then a failure of it must not be reported as unhandled.
    begun.catch(() => undefined);
    let end: TransactionEnd<T>;
    try {
      end = await body(tx, begun);
    } catch (err) {
      await tx`rollback`.catch(() => undefined);
      throw err;
    }
    const committing = tx`commit`;
    const outcomes = await Promise.allSettled([...end.last, committing]);
    // The first failure is the cause; statements after it only found the transaction failed.
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed !== undefined) {
      // Already rolled back by the COMMIT, unless the COMMIT itself failed: then for sure.
      await tx`rollback`.catch(() => undefined);
      throw failed.reason;
    }
    // A statement of the body that failed and was caught there left the transaction failed too.
    const { command } = await committing;
    if (command !== 'COMMIT') {
      throw new Error(`the transaction failed: PostgreSQL answered its COMMIT with ${command}`);
    }
    return end.result;
  } finally {
    tx.release();
  }
}
