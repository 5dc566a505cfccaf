import postgres from '@monitor/postgres-driver';
import { describe, expect, it } from 'vitest';
import { AppError, isRetriable, notFound } from '@monitor/platform';
import {
  DatabaseRefusedError,
  DatabaseUnavailableError,
  translateDbError,
  translatingDbErrors,
  translatingStoreFactory,
} from './database-errors.js';

function serverError(code: string): Error {
  return new postgres.PostgresError({ message: `error ${code}`, code } as unknown as string);
}

const connectionLost = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });

describe('translateDbError', () => {
  it('makes a lost connection and a deadlock retriable, keeping the driver error as cause', () => {
    for (const cause of [connectionLost, serverError('40P01'), serverError('57P01')]) {
      const translated = translateDbError(cause);
      expect(translated).toBeInstanceOf(DatabaseUnavailableError);
      expect(translated).toMatchObject({
        code: 'dependency_unavailable',
        retriable: true,
        retryAfterSeconds: 2,
      });
      expect((translated as Error).cause).toBe(cause);
      expect(isRetriable(translated)).toBe(true);
    }
  });

  it('makes what the server refuses for the data permanent, naming the SQLSTATE', () => {
    const translated = translateDbError(serverError('22P02'));
    expect(translated).toBeInstanceOf(DatabaseRefusedError);
    expect(translated).toMatchObject({ retriable: false, sqlState: '22P02' });
    expect(isRetriable(translated)).toBe(false);
  });

  it("makes postgres.js's own refusals permanent", () => {
    const tooMany = Object.assign(new Error('Max number of parameters exceeded'), {
      code: 'MAX_PARAMETERS_EXCEEDED',
    });
    expect(translateDbError(tooMany)).toBeInstanceOf(DatabaseRefusedError);
  });

  it('passes AppErrors and errors that are not the database’s unchanged', () => {
    const missing = notFound('rule rul_1');
    const bug = new TypeError('x is undefined');
    const nodeError = Object.assign(new Error('bad argument'), { code: 'ERR_INVALID_ARG_TYPE' });
    expect(translateDbError(missing)).toBe(missing);
    expect(translateDbError(bug)).toBe(bug);
    expect(translateDbError(nodeError)).toBe(nodeError);
  });
});

describe('translatingDbErrors', () => {
  it('translates a rejection and a synchronous throw, and passes results through', async () => {
    const rejecting = translatingDbErrors(async () => Promise.reject(connectionLost));
    await expect(rejecting()).rejects.toBeInstanceOf(DatabaseUnavailableError);
    const throwing = translatingDbErrors((): number => {
      throw serverError('23505');
    });
    expect(() => throwing()).toThrow(DatabaseRefusedError);
    const adding = translatingDbErrors((a: number, b: number) => Promise.resolve(a + b));
    await expect(adding(2, 3)).resolves.toBe(5);
    expect(translatingDbErrors((a: string) => a.length)('four')).toBe(4);
  });
});

describe('translatingStoreFactory', () => {
  it('wraps every method of every store the factory makes, with its arguments', async () => {
    const calls: string[] = [];
    const createStore = translatingStoreFactory((prefix: string) => ({
      find(id: string): Promise<never> {
        calls.push(`${prefix}${id}`);
        return Promise.reject(serverError('08006'));
      },
      missing: async (): Promise<never> => Promise.reject(notFound('service svc_1')),
      name: 'store',
    }));
    const store = createStore('a:');
    await expect(store.find('1')).rejects.toBeInstanceOf(DatabaseUnavailableError);
    await expect(store.missing()).rejects.toMatchObject({ code: 'not_found' });
    await expect(store.missing()).rejects.toBeInstanceOf(AppError);
    expect(store.name).toBe('store');
    expect(calls).toEqual(['a:1']);
  });
});
