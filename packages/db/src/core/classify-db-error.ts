import postgres from '@monitor/postgres-driver';

/**
 * Whether retrying the same work can succeed:
 * - `transient`: the connection or the server is (temporarily) unable: retry with backoff, never
 *   drop the data;
 * - `permanent`: the data itself is refused (bad value, constraint) or our SQL is wrong: retrying
 *   gives the same answer, so the caller isolates and dead-letters what causes it.
 */
export type DbErrorKind = 'transient' | 'permanent';

/** Node socket errors and postgres.js connection errors: the server may be back soon. */
const transientErrorCodes = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
]);

/** SQLSTATE classes (first two characters) of conditions that pass by themselves. */
const transientClasses = new Set([
  '08', // connection exception
  '53', // insufficient resources: disk full, out of memory, too many connections
  '58', // system error: I/O error
]);

/** Single SQLSTATEs that pass by themselves or once an operator/migration acts. */
const transientStates = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available (lock_timeout)
  '55006', // object_in_use
  '57014', // query_canceled (statement_timeout, cancel on shutdown)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, recovery)
  '57P05', // idle_session_timeout
  '3D000', // invalid_catalog_name: the database is not created yet
  '28000', // invalid_authorization_specification
  '28P01', // invalid_password
  // Our SQL is fixed text, so "does not exist" cannot come from the data: the schema is not (yet)
  // migrated, e.g. the writer started while `migrate` still runs. Waiting loses nothing;
  // dead-lettering would throw every sample away.
  '42P01', // undefined_table
  '42703', // undefined_column
  '42883', // undefined_function
  '42704', // undefined_object
  '42501', // insufficient_privilege: a grant is missing
]);

/**
 * SQLSTATE of an error the server sent, else undefined. postgres.js reports those as
 * `PostgresError` with the SQLSTATE in `code`; its own connection errors and Node's socket errors
 * carry names (CONNECTION_CLOSED, ECONNRESET) in `code` instead.
 */
export function sqlState(err: unknown): string | undefined {
  if (!(err instanceof postgres.PostgresError) && (err as Error | null)?.name !== 'PostgresError') {
    return undefined;
  }
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * Classifies an error thrown by a database call. Connection-level failures and the SQLSTATEs
 * above are transient; data exceptions (22), integrity violations (23), syntax and access
 * errors (42, apart from the missing-schema ones), program limits (54) and anything else are
 * permanent, and so is an error that did not come from the database at all (a bug does not heal
 * with retries).
 */
export function classifyDbError(err: unknown): DbErrorKind {
  if (typeof err !== 'object' || err === null) return 'permanent';
  const { code, errno } = err as { code?: unknown; errno?: unknown };
  if (typeof code === 'string' && transientErrorCodes.has(code)) return 'transient';
  if (typeof errno === 'string' && transientErrorCodes.has(errno)) return 'transient';
  const state = sqlState(err);
  if (state === undefined) return 'permanent';
  if (transientStates.has(state) || transientClasses.has(state.slice(0, 2))) return 'transient';
  return 'permanent';
}

/** True when the writer should retry the batch with backoff instead of dead-lettering it. */
export function isTransientDbError(err: unknown): boolean {
  return classifyDbError(err) === 'transient';
}
