import { PromqlError } from '@monitor/promql';

/** How long a canceled read waits for the server to take the cancel (see `cancelable`). */
const cancelWaitMs = 2000;

/** Waits for `promise` (which never rejects), or `ms` at most. */
async function settledWithin(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

/** The error a read rejects with once its query's `signal` aborted. */
export function queryCanceled(signal: AbortSignal): PromqlError {
  return new PromqlError('canceled', 'query canceled', { cause: signal.reason });
}

/**
 * Runs `query`, canceled when `signal` aborts. PostgreSQL cancels whatever the connection's
 * backend runs when the request arrives, and a query may end just before: the request would
 * then fail the connection's next statement (this read's commit, or another query's). So once
 * a cancel is sent this settles only after the server has taken it (it closes the request's
 * connection after signaling the backend, and a backend signaled while idle ignores it), at
 * most `cancelWaitMs` later.
 */
export async function cancelable<T>(
  query: PromiseLike<T> & { cancel(): unknown },
  signal: AbortSignal,
): Promise<T> {
  let cancel: Promise<unknown> | undefined;
  const onAbort = (): void => {
    cancel = Promise.resolve(query.cancel()).catch(() => undefined);
  };
  signal.addEventListener('abort', onAbort);
  try {
    return await query;
  } catch (err) {
    if (signal.aborted) throw queryCanceled(signal);
    throw err;
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (cancel !== undefined) await settledWithin(cancel, cancelWaitMs);
  }
}

/**
 * `Promise.all`, but settled only once every read has: reads that decode into a query's pooled
 * slabs must all have stopped before their reader ends, or a slab could go back to the pool
 * (and on to another query) while one still writes into it. Rejects with the first failure.
 */
export async function allSettled<T extends readonly unknown[] | []>(
  reads: T,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const outcomes = await Promise.allSettled(reads);
  for (const outcome of outcomes) if (outcome.status === 'rejected') throw outcome.reason;
  return outcomes.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as {
    -readonly [K in keyof T]: Awaited<T[K]>;
  };
}
