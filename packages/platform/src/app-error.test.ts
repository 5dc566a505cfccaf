import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AppError,
  dependencyUnavailable,
  errorCodes,
  formatIssuePath,
  fromZodError,
  isAppError,
  isRetriable,
  maxListedIssues,
  notFound,
  rateLimited,
  validationError,
} from './app-error.js';

describe('AppError', () => {
  it('carries code, message, retriable flag and cause', () => {
    const cause = new Error('ECONNREFUSED');
    const error = new AppError('conflict', 'The rule changed meanwhile.', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(isAppError(error)).toBe(true);
    expect(error.name).toBe('AppError');
    expect(error.code).toBe('conflict');
    expect(error.message).toBe('The rule changed meanwhile.');
    expect(error.retriable).toBe(false);
    expect(error.cause).toBe(cause);
  });

  it('is retriable by default only for transient codes', () => {
    const retriable = errorCodes.filter((code) => new AppError(code, 'x').retriable);
    expect(retriable).toEqual(['rate_limited', 'dependency_unavailable']);
    expect(new AppError('internal', 'x', { retriable: true }).retriable).toBe(true);
  });

  it('builds the transient errors with a retry hint', () => {
    const cause = new Error('broker down');
    const error = dependencyUnavailable('The message bus', 5, cause);
    expect(error).toMatchObject({
      code: 'dependency_unavailable',
      retriable: true,
      retryAfterSeconds: 5,
      message: 'The message bus is temporarily unavailable.',
      cause,
    });
    expect(rateLimited(12)).toMatchObject({ code: 'rate_limited', retryAfterSeconds: 12 });
    expect(notFound('Rule rul_1').message).toBe('Rule rul_1 was not found.');
  });

  it('calls retriable only the AppErrors that say so, never a plain error', () => {
    expect(isRetriable(dependencyUnavailable('The database', 2))).toBe(true);
    expect(isRetriable(new AppError('internal', 'x', { retriable: true }))).toBe(true);
    expect(isRetriable(notFound('Rule rul_1'))).toBe(false);
    const socketError = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(isRetriable(socketError)).toBe(false);
    expect(isRetriable('down')).toBe(false);
  });
});

describe('formatIssuePath', () => {
  it.each([
    [[], ''],
    [['host'], 'host'],
    [['metrics', 'cpu_percent'], 'metrics.cpu_percent'],
    [[0, 'metrics', 'cpu_percent'], '[0].metrics.cpu_percent'],
    [['processes', 2, 'pid'], 'processes[2].pid'],
    [['metrics', 'cpu.user'], 'metrics["cpu.user"]'],
    [['tags', 'k8s-app'], 'tags["k8s-app"]'],
    [['tags', ''], 'tags[""]'],
    [['tags', 'say "hi"'], 'tags["say \\"hi\\""]'],
  ])('formats %j as %s', (path, expected) => {
    expect(formatIssuePath(path)).toBe(expected);
  });

  it('keeps distinct paths distinct', () => {
    const segment = fc.oneof(fc.nat({ max: 5 }), fc.string({ maxLength: 4 }));
    fc.assert(
      fc.property(
        fc.array(segment, { maxLength: 4 }),
        fc.array(segment, { maxLength: 4 }),
        (a, b) => {
          fc.pre(JSON.stringify(a) !== JSON.stringify(b));
          expect(formatIssuePath(a)).not.toBe(formatIssuePath(b));
        },
      ),
    );
  });
});

describe('fromZodError', () => {
  const payload = z.object({
    host: z.string().min(1),
    metrics: z.record(z.string(), z.number()),
    processes: z.array(z.object({ pid: z.number().int().nonnegative() })).optional(),
  });

  it('maps every zod issue to a path and message', () => {
    const result = payload.safeParse({
      host: '',
      metrics: { cpu: 'high' },
      processes: [{ pid: 1 }, { pid: -1 }],
    });
    expect(result.success).toBe(false);
    const error = fromZodError(result.error!);
    expect(error.code).toBe('validation');
    expect(error.details?.map((issue) => issue.path)).toEqual([
      'host',
      'metrics.cpu',
      'processes[1].pid',
    ]);
    expect(error.details?.every((issue) => issue.message.length > 0)).toBe(true);
    expect(error.message).toMatch(/^The request is invalid: host: .+ \(and 2 more\)\.$/);
  });

  it('puts a prefix in front of every path', () => {
    const result = payload.safeParse({ host: 'a', metrics: { 'cpu.user': null } });
    const error = fromZodError(result.error!, { prefix: [3] });
    expect(error.details?.map((issue) => issue.path)).toEqual(['[3].metrics["cpu.user"]']);
  });

  it('names the root with an empty path', () => {
    const result = payload.safeParse('nope');
    expect(fromZodError(result.error!).details?.map((issue) => issue.path)).toEqual(['']);
  });

  it('lets the caller choose the message', () => {
    const result = payload.safeParse({});
    expect(fromZodError(result.error!, { message: 'Bad query.' }).message).toBe('Bad query.');
  });
});

describe('validationError', () => {
  it('lists at most maxListedIssues issues but counts them all', () => {
    const issues = Array.from({ length: maxListedIssues + 5 }, (_, i) => ({
      path: `[${i}].host`,
      message: 'Required',
    }));
    const error = validationError(issues);
    expect(error.details).toHaveLength(maxListedIssues);
    expect(error.message).toBe(
      `The request is invalid: [0].host: Required (and ${maxListedIssues + 4} more).`,
    );
  });
});
