import { AppError } from '@monitor/platform';

/** Why the bus could not take a publish (for logs and metrics; clients see one message). */
export type BusUnavailableReason =
  /** No acknowledgement within the publish deadline. */
  | 'timeout'
  /** The broker refused or failed the request (connection lost, no leader, ...). */
  | 'broker_error'
  /** The publisher or bus was closed. */
  | 'closed';

/**
 * The bus cannot take the publish right now. An `AppError` with code `dependency_unavailable`,
 * `retriable` and a `retryAfterSeconds` hint, so a problem handler answers 503 with
 * `Retry-After` without knowing about the bus. The publish may still have been stored.
 */
export class BusUnavailableError extends AppError {
  readonly reason: BusUnavailableReason;

  constructor(
    reason: BusUnavailableReason,
    options: { retryAfterSeconds?: number; cause?: unknown } = {},
  ) {
    super('dependency_unavailable', 'The message bus is temporarily unavailable.', {
      retriable: true,
      retryAfterSeconds: options.retryAfterSeconds ?? defaultRetryAfterSeconds,
      cause: options.cause,
    });
    this.reason = reason;
  }
}

export const defaultRetryAfterSeconds = 2;
