import { AppError, internalError } from '@monitor/platform';
import { BusUnavailableError } from './bus-unavailable-error.js';

/**
 * Kafka protocol errors that retrying cannot fix: the request itself is wrong (too large,
 * invalid) or not allowed. Everything else (connections, timeouts, leader elections, unknown
 * failures) counts as the bus being unavailable, which the caller may retry.
 */
const permanentErrorTypes: ReadonlySet<string> = new Set([
  'MESSAGE_TOO_LARGE',
  'RECORD_LIST_TOO_LARGE',
  'INVALID_RECORD',
  'INVALID_TOPIC_EXCEPTION',
  'INVALID_REQUIRED_ACKS',
  'TOPIC_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'UNSUPPORTED_VERSION',
  'INVALID_PARTITIONS',
  'INVALID_REPLICATION_FACTOR',
  'INVALID_CONFIG',
  'POLICY_VIOLATION',
]);

/** The protocol error types (`MESSAGE_TOO_LARGE`, ...) found in `err`, its causes and aggregates. */
export function kafkaErrorTypes(err: unknown): string[] {
  const types: string[] = [];
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    const record = value as { type?: unknown; cause?: unknown; errors?: unknown };
    if (typeof record.type === 'string') types.push(record.type);
    visit(record.cause);
    if (Array.isArray(record.errors)) for (const inner of record.errors) visit(inner);
  };
  visit(err);
  return types;
}

/**
 * Maps a kafkajs failure to what callers see: an `AppError` `internal` (not retriable) for a
 * permanent protocol error, else a `BusUnavailableError`. Typed errors pass through.
 */
export function toBusError(err: unknown, retryAfterSeconds?: number): AppError {
  if (err instanceof AppError) return err;
  const permanent = kafkaErrorTypes(err).find((type) => permanentErrorTypes.has(type));
  if (permanent !== undefined) {
    return internalError(`the message bus rejected the request (${permanent})`, err);
  }
  return new BusUnavailableError('broker_error', { cause: err, retryAfterSeconds });
}
