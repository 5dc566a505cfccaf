/**
 * Why a query failed, as Prometheus' HTTP API names it (`errorType`): `bad_data` for a query
 * that cannot be run as written (syntax, types, limits), `execution` for one that failed while
 * running (too many samples, many-to-many matching), `timeout` and `canceled` for one stopped,
 * `unavailable` when the series source could not answer.
 */
export type PromqlErrorType = 'bad_data' | 'execution' | 'timeout' | 'canceled' | 'unavailable';

/** The one error the library throws; it knows nothing of HTTP. */
export class PromqlError extends Error {
  readonly type: PromqlErrorType;

  constructor(type: PromqlErrorType, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PromqlError';
    this.type = type;
  }
}

/** A `bad_data` error. */
export function badData(message: string): PromqlError {
  return new PromqlError('bad_data', message);
}

/** An `execution` error (what Prometheus' evaluator panics with and recovers into). */
export function executionError(message: string): PromqlError {
  return new PromqlError('execution', message);
}
