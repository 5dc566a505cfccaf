import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type postgres from '@monitor/postgres-driver';

/**
 * Streams `chunks` (an array, or another query's COPY output) into a `COPY … FROM STDIN`
 * query; resolves once the server accepted the data and rejects with the server's error
 * otherwise.
 *
 * Works around postgres.js 3.4.9 (porsager/postgres#1173, open): when the server rejects a
 * COPY after the last chunk went out (a unique violation, say), its writable neither finishes
 * nor fails, so awaiting it hangs forever and the transaction is never rolled back. The error
 * still reaches the query's internal `reject`, so we listen there too. This reaches into
 * postgres.js internals (@monitor/postgres-driver): a new upstream version taken without that
 * hook fails here loudly (the integration tests exercise the failure path) instead of hanging.
 */
export async function copyIn(
  query: postgres.PendingQuery<postgres.Row[]>,
  chunks: Iterable<string | Uint8Array> | AsyncIterable<string | Uint8Array>,
): Promise<void> {
  const internals = query as unknown as { reject?: unknown };
  const originalReject = internals.reject;
  if (typeof originalReject !== 'function') {
    throw new Error('unsupported postgres.js version: no query.reject to observe COPY errors');
  }
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_resolve, reject) => {
    fail = reject;
  });
  // Settled only on failure; the race below observes it, this keeps it from being "unhandled".
  failed.catch(() => undefined);
  internals.reject = (err: unknown): unknown => {
    fail(err);
    return (originalReject as (err: unknown) => unknown)(err);
  };
  const writable = await query.writable();
  await Promise.race([pipeline(Readable.from(chunks, { objectMode: false }), writable), failed]);
}
