import { AppError } from '@monitor/platform';
import { classifyDbError, sqlState } from './classify-db-error.js';

/** Seconds a client is asked to wait before it tries again while the database is away. */
const databaseRetryAfterSeconds = 2;

/**
 * The database cannot do the work now (connection lost, server restarting, deadlock, schema not
 * migrated yet): the same call later can succeed, so callers retry and never drop the data. An
 * AppError `dependency_unavailable`, so the API answers 503 with Retry-After without asking why.
 */
export class DatabaseUnavailableError extends AppError {
  constructor(cause: unknown) {
    super('dependency_unavailable', 'The database is temporarily unavailable.', {
      retryAfterSeconds: databaseRetryAfterSeconds,
      cause,
    });
  }
}

/**
 * The database refused the work itself (a value out of range, a constraint, our SQL): the same
 * call gives the same answer, so callers isolate and dead-letter what causes it.
 */
export class DatabaseRefusedError extends AppError {
  /** The SQLSTATE the server answered with, when it was the server that refused. */
  readonly sqlState: string | undefined;

  constructor(cause: unknown) {
    super('internal', 'The database refused the operation.', { retriable: false, cause });
    this.sqlState = sqlState(cause);
  }
}

/** The server's SQLSTATE errors and postgres.js's own (`MAX_PARAMETERS_EXCEEDED`…), not Node's `ERR_*`. */
function isDriverError(err: unknown): boolean {
  if (sqlState(err) !== undefined) return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[A-Z_]+$/.test(code) && !code.startsWith('ERR_');
}

/**
 * The typed error for whatever a database call threw. AppErrors (a `not_found` raised by a store)
 * pass unchanged, and so does an error that did not come from the driver or the socket: a bug
 * stays a bug, with its own stack.
 */
export function translateDbError(err: unknown): unknown {
  if (err instanceof AppError) return err;
  if (classifyDbError(err) === 'transient') return new DatabaseUnavailableError(err);
  return isDriverError(err) ? new DatabaseRefusedError(err) : err;
}

function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/** `fn` with whatever it throws or rejects with translated by `translateDbError`. */
export function translatingDbErrors<A extends unknown[], R>(
  fn: (...args: A) => R,
): (...args: A) => R {
  return (...args: A): R => {
    let result: R;
    try {
      result = fn(...args);
    } catch (err) {
      throw translateDbError(err);
    }
    if (!isPromiseLike(result)) return result;
    return Promise.resolve(result).catch((err: unknown) => {
      throw translateDbError(err);
    }) as R;
  };
}

/**
 * A store factory whose stores translate what their methods throw: the one place where raw
 * driver errors become `DatabaseUnavailableError` or `DatabaseRefusedError` before they leave db.
 */
export function translatingStoreFactory<A extends unknown[], S extends object>(
  factory: (...args: A) => S,
): (...args: A) => S {
  return (...args: A): S => {
    const store = factory(...args);
    const translated: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(store)) {
      translated[name] =
        typeof member === 'function'
          ? translatingDbErrors(member as (...memberArgs: unknown[]) => unknown)
          : member;
    }
    return translated as S;
  };
}
