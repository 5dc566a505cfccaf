import type { z } from 'zod';

/**
 * The closed set of error codes. Code below the transport throws `AppError` with one of these;
 * the problem handler owns the (exhaustive) mapping from code to HTTP status.
 */
export const errorCodes = [
  /** A body that is not a message of its protocol at all (agent protocols: "do not retry"). */
  'bad_request',
  'validation',
  'not_found',
  'unauthorized',
  'forbidden',
  'conflict',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'dependency_unavailable',
  'method_not_allowed',
  'internal',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

/**
 * One problem with an input. `path` uses the accessor notation of `formatIssuePath`:
 * `metrics.cpu_percent`, `[0].host`, `processes[2].pid`, `metrics["cpu.user"]`; the root is `""`.
 */
export interface ValidationIssue {
  readonly path: string;
  readonly message: string;
}

export interface AppErrorOptions {
  /** Whether trying the same operation again later may succeed. Defaults per code (see `isRetriableByDefault`). */
  readonly retriable?: boolean;
  /** The individual problems of a `validation` error. */
  readonly details?: readonly ValidationIssue[];
  /** A hint for `rate_limited` and `dependency_unavailable`: when to try again. */
  readonly retryAfterSeconds?: number;
  /** For `method_not_allowed`: the methods the resource does accept. */
  readonly allowedMethods?: readonly string[];
  /** The underlying error; logged, never shown to a client. */
  readonly cause?: unknown;
}

/** Only the transient codes are retriable unless the thrower says otherwise. */
function isRetriableByDefault(code: ErrorCode): boolean {
  return code === 'rate_limited' || code === 'dependency_unavailable';
}

/**
 * A typed error from below the transport. It knows nothing of HTTP.
 *
 * Contract: `message` is client-facing for every code except `internal` (whose message only
 * reaches the log), so write it for an API user and never put secrets, SQL or stack details in it.
 */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly retriable: boolean;
  readonly details: readonly ValidationIssue[] | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly allowedMethods: readonly string[] | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retriable = options.retriable ?? isRetriableByDefault(code);
    this.details = options.details;
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.allowedMethods = options.allowedMethods;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/**
 * Whether the same work may succeed if tried again later: only an AppError that says so (a
 * dependency away, a rate limit). Anything else, a bug included, does not heal with retries.
 */
export function isRetriable(err: unknown): boolean {
  return err instanceof AppError && err.retriable;
}

const identifier = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Formats a path the way a JavaScript accessor reads: identifier keys joined with dots, array
 * indexes as `[n]`, any other key quoted as `["key"]` (metric names and tag keys may hold `.`,
 * `:` or `-`). Examples: `[0].metrics.cpu_percent`, `processes[2].pid`, `metrics["cpu.user"]`.
 * The empty path (the whole input) is `""`.
 */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') {
      out += `[${segment}]`;
    } else {
      const key = typeof segment === 'symbol' ? (segment.description ?? '') : segment;
      if (identifier.test(key)) {
        out += out === '' ? key : `.${key}`;
      } else {
        out += `[${JSON.stringify(key)}]`;
      }
    }
  }
  return out;
}

/** Responses list at most this many issues; the detail still states the total. */
export const maxListedIssues = 100;

function describeIssues(issues: readonly ValidationIssue[]): string {
  const first = issues[0];
  if (first === undefined) return 'The request is invalid.';
  const where = first.path === '' ? '' : `${first.path}: `;
  const more = issues.length > 1 ? ` (and ${issues.length - 1} more)` : '';
  return `The request is invalid: ${where}${first.message}${more}.`;
}

/**
 * A `validation` error. Lists at most `maxListedIssues` issues; the message (the problem's
 * `detail`) names the first one and the total.
 */
export function validationError(
  issues: readonly ValidationIssue[],
  message: string = describeIssues(issues),
): AppError {
  return new AppError('validation', message, { details: issues.slice(0, maxListedIssues) });
}

export interface FromZodErrorOptions {
  /** Path segments put in front of every issue path, e.g. `[3]` for the fourth item of a batch. */
  readonly prefix?: readonly (string | number)[];
  /** Overrides the generated message (the problem's `detail`). */
  readonly message?: string;
}

/** Maps zod issues to `ValidationIssue`s, paths formatted by `formatIssuePath`. */
function zodIssues(
  error: z.core.$ZodError,
  prefix: readonly (string | number)[] = [],
): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: formatIssuePath([...prefix, ...issue.path]),
    message: issue.message,
  }));
}

/** A `validation` error from a zod error (any zod 4 flavour). */
export function fromZodError(error: z.core.$ZodError, options: FromZodErrorOptions = {}): AppError {
  const issues = zodIssues(error, options.prefix);
  return validationError(issues, options.message ?? describeIssues(issues));
}

/** `what` names the missing resource for the client, e.g. `rule rul_01H…`. */
export function notFound(what: string): AppError {
  return new AppError('not_found', `${what} was not found.`);
}

/** 400: the body is not a message of its protocol (remote-write senders do not retry a 400). */
export function badRequest(message: string): AppError {
  return new AppError('bad_request', message);
}

export function unauthorized(message = 'A valid API key is required.'): AppError {
  return new AppError('unauthorized', message);
}

export function forbidden(message = 'The API key lacks the scope this operation needs.'): AppError {
  return new AppError('forbidden', message);
}

export function payloadTooLarge(limitBytes: number): AppError {
  return new AppError('payload_too_large', `The request body exceeds ${limitBytes} bytes.`);
}

export function unsupportedMediaType(expected = 'application/json'): AppError {
  return new AppError('unsupported_media_type', `The request body must be ${expected}.`);
}

export function rateLimited(
  retryAfterSeconds: number,
  message = 'Too many requests for this API key.',
): AppError {
  return new AppError('rate_limited', message, { retryAfterSeconds });
}

/**
 * A transient failure of something we depend on (`what`: a client-safe name such as
 * `the message bus`). `cause` is logged, never shown.
 */
export function dependencyUnavailable(
  what: string,
  retryAfterSeconds: number,
  cause?: unknown,
): AppError {
  return new AppError('dependency_unavailable', `${what} is temporarily unavailable.`, {
    retryAfterSeconds,
    cause,
  });
}

/** `allowedMethods` becomes the `Allow` header. */
export function methodNotAllowed(allowedMethods: readonly string[]): AppError {
  return new AppError('method_not_allowed', 'The method is not allowed for this resource.', {
    allowedMethods,
  });
}

/** An unexpected failure; `message` only reaches the log. */
export function internalError(message: string, cause?: unknown): AppError {
  return new AppError('internal', message, { cause });
}
