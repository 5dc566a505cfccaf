import { z } from 'zod';
import {
  AppError,
  fromZodError,
  payloadTooLarge,
  validationError,
  type ErrorCode,
  type ValidationIssue,
} from './app-error.js';

/** RFC 9457 media type of every 4xx/5xx body. */
export const problemContentType = 'application/problem+json; charset=utf-8';

/**
 * Problem `type` URIs are `https://monitor.dev/problems/<code with dashes>`, one per error code
 * (`…/validation`, `…/not-found`, `…/dependency-unavailable`). They are stable identifiers a client
 * may switch on; they need not resolve.
 */
const problemTypeBase = 'https://monitor.dev/problems/';

function problemTypeUri(code: ErrorCode): string {
  return problemTypeBase + code.replaceAll('_', '-');
}

/** The RFC 9457 body. `errors` is present on every 422 (validation) and only there. */
interface ProblemBody {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly errors?: readonly ValidationIssue[];
}

/** A response ready to send: status, headers (Content-Type included) and body. */
export interface Problem {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: ProblemBody;
}

/** The detail of every 500: the real cause goes to the log only. */
export const internalErrorDetail = 'An unexpected error occurred. It has been logged.';

/** Retry-After when the thrower gave no hint. */
const defaultRetryAfterSeconds = { rate_limited: 1, dependency_unavailable: 5 } as const;

function assertNever(value: never): never {
  throw new Error(`unhandled error code ${String(value)}`);
}

/** The exhaustive mapping from error code to HTTP status and problem title. */
export function describeErrorCode(code: ErrorCode): { status: number; title: string } {
  switch (code) {
    case 'bad_request':
      return { status: 400, title: 'Bad request' };
    case 'validation':
      return { status: 422, title: 'Invalid request' };
    case 'not_found':
      return { status: 404, title: 'Not found' };
    case 'unauthorized':
      return { status: 401, title: 'Unauthorized' };
    case 'forbidden':
      return { status: 403, title: 'Forbidden' };
    case 'conflict':
      return { status: 409, title: 'Conflict' };
    case 'payload_too_large':
      return { status: 413, title: 'Payload too large' };
    case 'unsupported_media_type':
      return { status: 415, title: 'Unsupported media type' };
    case 'rate_limited':
      return { status: 429, title: 'Too many requests' };
    case 'dependency_unavailable':
      return { status: 503, title: 'Service unavailable' };
    case 'method_not_allowed':
      return { status: 405, title: 'Method not allowed' };
    case 'internal':
      return { status: 500, title: 'Internal server error' };
    default:
      return assertNever(code);
  }
}

/** The fields body-parser (and http-errors in general) put on the errors they raise. */
interface HttpLikeError {
  readonly type?: unknown;
  readonly status?: unknown;
  readonly statusCode?: unknown;
  readonly expose?: unknown;
  readonly limit?: unknown;
  readonly message?: unknown;
}

function isObject(value: unknown): value is HttpLikeError {
  return typeof value === 'object' && value !== null;
}

const wholeBody = (message: string): ValidationIssue[] => [{ path: '', message }];

function fromBodyParser(type: string, err: HttpLikeError): AppError | undefined {
  switch (type) {
    case 'entity.parse.failed':
      // JSON.parse's own message quotes the body; the client gets a fixed text instead.
      return validationError(wholeBody('malformed JSON'), 'The request body is not valid JSON.');
    case 'entity.too.large':
      return typeof err.limit === 'number'
        ? payloadTooLarge(err.limit)
        : new AppError('payload_too_large', 'The request body is too large.');
    case 'parameters.too.many':
      return new AppError('payload_too_large', 'The request has too many parameters.');
    case 'encoding.unsupported':
      return new AppError(
        'unsupported_media_type',
        'The request body uses an unsupported Content-Encoding.',
      );
    case 'charset.unsupported':
      return new AppError(
        'unsupported_media_type',
        'The request body uses an unsupported charset.',
      );
    case 'request.aborted':
    case 'request.size.invalid':
      return validationError(
        wholeBody('incomplete body'),
        'The request body is shorter than its Content-Length.',
      );
    case 'entity.verify.failed':
      return new AppError('forbidden', 'The request body was rejected.');
    default:
      return undefined;
  }
}

function codeForClientStatus(status: number): ErrorCode {
  switch (status) {
    case 401:
      return 'unauthorized';
    case 403:
      return 'forbidden';
    case 404:
      return 'not_found';
    case 405:
      return 'method_not_allowed';
    case 409:
      return 'conflict';
    case 413:
      return 'payload_too_large';
    case 415:
      return 'unsupported_media_type';
    case 429:
      return 'rate_limited';
    default:
      // 400 and the rest: the request is wrong in a way the contract reports as 422.
      return 'validation';
  }
}

/**
 * Normalises anything thrown into an `AppError`: zod errors become `validation`, body-parser and
 * other http-errors (4xx with `expose`) keep their meaning, anything else is `internal` with the
 * original as `cause`.
 */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof z.core.$ZodError) return fromZodError(err);
  if (err instanceof URIError && (err as HttpLikeError).status === 400) {
    // The router could not percent-decode a path parameter.
    return validationError(
      wholeBody('malformed percent-encoding'),
      'A path parameter is not valid percent-encoding.',
    );
  }
  if (isObject(err)) {
    if (typeof err.type === 'string') {
      const mapped = fromBodyParser(err.type, err);
      if (mapped !== undefined) return mapped;
    }
    const status =
      typeof err.status === 'number'
        ? err.status
        : typeof err.statusCode === 'number'
          ? err.statusCode
          : undefined;
    if (
      status !== undefined &&
      status >= 400 &&
      status < 500 &&
      err.expose === true &&
      typeof err.message === 'string'
    ) {
      const code = codeForClientStatus(status);
      return code === 'validation'
        ? validationError(wholeBody(err.message), err.message)
        : new AppError(code, err.message);
    }
  }
  return new AppError('internal', 'unexpected error', { cause: err });
}

function retryAfter(seconds: number | undefined, fallback: number): string {
  const value = seconds !== undefined && Number.isFinite(seconds) ? seconds : fallback;
  return String(Math.max(1, Math.ceil(value)));
}

/** Pure: the problem+json response for anything thrown. Never leaks an internal message. */
export function toProblem(err: unknown): Problem {
  const error = toAppError(err);
  const { status, title } = describeErrorCode(error.code);
  const headers: Record<string, string> = { 'Content-Type': problemContentType };
  const base = { type: problemTypeUri(error.code), title, status };
  let body: ProblemBody = { ...base, detail: error.message };
  switch (error.code) {
    case 'validation':
      body = { ...body, errors: error.details ?? [] };
      break;
    case 'unauthorized':
      headers['WWW-Authenticate'] = 'Bearer realm="monitor"';
      break;
    case 'rate_limited':
    case 'dependency_unavailable':
      headers['Retry-After'] = retryAfter(
        error.retryAfterSeconds,
        defaultRetryAfterSeconds[error.code],
      );
      break;
    case 'method_not_allowed':
      if (error.allowedMethods !== undefined) {
        headers['Allow'] = error.allowedMethods.join(', ');
      }
      break;
    case 'internal':
      body = { ...base, detail: internalErrorDetail };
      break;
    default:
      break;
  }
  return { status, headers, body };
}
