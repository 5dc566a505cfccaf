import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AppError,
  dependencyUnavailable,
  errorCodes,
  methodNotAllowed,
  rateLimited,
  type ErrorCode,
} from './app-error.js';
import {
  describeErrorCode,
  internalErrorDetail,
  problemContentType,
  toAppError,
  toProblem,
} from './problem.js';

const expectedStatus: Record<ErrorCode, number> = {
  bad_request: 400,
  validation: 422,
  not_found: 404,
  unauthorized: 401,
  forbidden: 403,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  dependency_unavailable: 503,
  method_not_allowed: 405,
  internal: 500,
};

describe('toProblem', () => {
  it.each(errorCodes.map((code) => [code, expectedStatus[code]] as const))(
    'answers %s with %i',
    (code, status) => {
      const problem = toProblem(new AppError(code, 'Something specific.'));
      expect(problem.status).toBe(status);
      expect(problem.headers['Content-Type']).toBe(problemContentType);
      expect(problem.body).toMatchObject({
        type: `https://monitor.dev/problems/${code.replaceAll('_', '-')}`,
        title: describeErrorCode(code).title,
        status,
      });
      expect(problem.body.detail).toBe(
        code === 'internal' ? internalErrorDetail : 'Something specific.',
      );
      expect('errors' in problem.body).toBe(code === 'validation');
    },
  );

  it('lists validation issues under errors', () => {
    const details = [{ path: '[0].host', message: 'Required' }];
    const problem = toProblem(new AppError('validation', 'Bad.', { details }));
    expect(problem.body.errors).toEqual(details);
  });

  it('answers a zod error with 422 and its paths', () => {
    const result = z.object({ limit: z.number().max(100) }).safeParse({ limit: 500 });
    const problem = toProblem(result.error);
    expect(problem.status).toBe(422);
    expect(problem.body.errors?.map((issue) => issue.path)).toEqual(['limit']);
  });

  it('sets Retry-After on 429 and 503, rounded up to whole seconds', () => {
    expect(toProblem(rateLimited(1.2)).headers['Retry-After']).toBe('2');
    expect(toProblem(dependencyUnavailable('The database', 30)).headers['Retry-After']).toBe('30');
    expect(toProblem(new AppError('dependency_unavailable', 'Down.')).headers['Retry-After']).toBe(
      '5',
    );
    expect(toProblem(rateLimited(0)).headers['Retry-After']).toBe('1');
  });

  it('challenges a 401 with WWW-Authenticate', () => {
    expect(toProblem(new AppError('unauthorized', 'No key.')).headers['WWW-Authenticate']).toBe(
      'Bearer realm="monitor"',
    );
  });

  it('lists the allowed methods of a 405', () => {
    expect(toProblem(methodNotAllowed(['GET', 'POST'])).headers['Allow']).toBe('GET, POST');
  });

  it('leaks nothing of an unexpected error', () => {
    const error = new Error('SELECT secret FROM api_keys WHERE hash = $1');
    const problem = toProblem(error);
    expect(problem.status).toBe(500);
    expect(problem.body.detail).toBe(internalErrorDetail);
    const text = JSON.stringify(problem);
    expect(text).not.toContain('SELECT');
    expect(text).not.toContain('api_keys');
    expect(text).not.toContain('at ');
  });

  it('keeps the message of an internal AppError out of the body', () => {
    const problem = toProblem(new AppError('internal', 'pool exhausted: SELECT 1'));
    expect(JSON.stringify(problem.body)).not.toContain('SELECT');
  });

  it.each([['a string'], [null], [undefined], [42], [{ message: 'SELECT 1' }]])(
    'answers the non-error %j with a generic 500',
    (thrown) => {
      const problem = toProblem(thrown);
      expect(problem.status).toBe(500);
      expect(problem.body.detail).toBe(internalErrorDetail);
    },
  );

  it('never trusts a status on an error that is not marked for exposure', () => {
    const error = Object.assign(new Error('AccessDenied on bucket internal-backups'), {
      statusCode: 403,
    });
    const problem = toProblem(error);
    expect(problem.status).toBe(500);
    expect(JSON.stringify(problem.body)).not.toContain('bucket');
  });
});

/** What body-parser (http-errors) throws. */
function bodyParserError(type: string, status: number, extra: Record<string, unknown> = {}) {
  return Object.assign(new Error(`raw message for ${type}`), {
    type,
    status,
    statusCode: status,
    expose: true,
    ...extra,
  });
}

describe('toAppError', () => {
  it('returns an AppError unchanged', () => {
    const error = new AppError('conflict', 'x');
    expect(toAppError(error)).toBe(error);
  });

  it('wraps an unknown error as internal, keeping it as the cause', () => {
    const error = new Error('boom');
    expect(toAppError(error)).toMatchObject({ code: 'internal', cause: error });
  });

  it.each([
    ['entity.parse.failed', 400, 'validation', 'The request body is not valid JSON.'],
    ['entity.too.large', 413, 'payload_too_large', 'The request body exceeds 1024 bytes.'],
    ['parameters.too.many', 413, 'payload_too_large', 'The request has too many parameters.'],
    [
      'encoding.unsupported',
      415,
      'unsupported_media_type',
      'The request body uses an unsupported Content-Encoding.',
    ],
    [
      'charset.unsupported',
      415,
      'unsupported_media_type',
      'The request body uses an unsupported charset.',
    ],
    [
      'request.size.invalid',
      400,
      'validation',
      'The request body is shorter than its Content-Length.',
    ],
  ])('maps body-parser %s to %s', (type, status, code, message) => {
    const error = toAppError(bodyParserError(type, status, { limit: 1024 }));
    expect(error.code).toBe(code);
    expect(error.message).toBe(message);
  });

  it('answers malformed JSON with 422 and a whole-body issue', () => {
    const problem = toProblem(bodyParserError('entity.parse.failed', 400));
    expect(problem.status).toBe(422);
    expect(problem.body.errors).toEqual([{ path: '', message: 'malformed JSON' }]);
  });

  it('keeps the meaning of other exposed client errors', () => {
    const notFound = Object.assign(new Error('Not Found'), { status: 404, expose: true });
    const badRequest = Object.assign(new Error('Bad thing'), { status: 400, expose: true });
    expect(toAppError(notFound).code).toBe('not_found');
    expect(toProblem(badRequest).status).toBe(422);
  });

  it('answers a path parameter the router could not decode with 422', () => {
    const error = Object.assign(new URIError("Failed to decode param '%E0'"), { status: 400 });
    expect(toProblem(error).status).toBe(422);
  });
});
