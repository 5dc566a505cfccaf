import postgres from '@monitor/postgres-driver';
import { describe, expect, it } from 'vitest';
import { classifyDbError, isTransientDbError, sqlState } from './classify-db-error.js';

function serverError(code: string): Error {
  return new postgres.PostgresError({ message: `error ${code}`, code } as unknown as string);
}

function socketError(code: string): Error {
  return Object.assign(new Error(`connect ${code}`), { code, errno: -1 });
}

describe('classifyDbError', () => {
  it.each([
    'ECONNREFUSED',
    'ECONNRESET',
    'ETIMEDOUT',
    'CONNECTION_CLOSED',
    'CONNECT_TIMEOUT',
    'CONNECTION_ENDED',
  ])('treats the connection error %s as transient', (code) => {
    expect(classifyDbError(socketError(code))).toBe('transient');
  });

  it.each([
    '08006',
    '08001',
    '40001',
    '40P01',
    '53100',
    '53300',
    '57P01',
    '57P02',
    '57P03',
    '55P03',
    '57014',
    '42P01',
  ])('treats SQLSTATE %s as transient', (code) => {
    expect(classifyDbError(serverError(code))).toBe('transient');
  });

  it.each([
    '22003',
    '22P02',
    '22021',
    '23502',
    '23503',
    '23505',
    '42601',
    '42804',
    '54000',
    'XX000',
  ])('treats SQLSTATE %s as permanent', (code) => {
    expect(classifyDbError(serverError(code))).toBe('permanent');
  });

  it('treats errors from outside the database as permanent', () => {
    expect(classifyDbError(new TypeError('bug'))).toBe('permanent');
    expect(classifyDbError('boom')).toBe('permanent');
    expect(classifyDbError(undefined)).toBe('permanent');
    expect(isTransientDbError(null)).toBe(false);
  });
});

describe('sqlState', () => {
  it('reads the SQLSTATE of a server error only', () => {
    expect(sqlState(serverError('23505'))).toBe('23505');
    expect(sqlState(socketError('EPIPE'))).toBeUndefined();
    expect(sqlState({ code: '23505' })).toBeUndefined();
  });
});
