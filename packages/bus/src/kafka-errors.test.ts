import { AppError } from '@monitor/platform';
import { describe, expect, it } from 'vitest';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { kafkaErrorTypes, toBusError } from './kafka-errors.js';

/** Shaped like kafkajs errors: a protocol error carries `type`, wrappers carry `cause`/`errors`. */
function protocolError(type: string, retriable: boolean): Error {
  return Object.assign(new Error(type), { name: 'KafkaJSProtocolError', type, retriable });
}

describe('toBusError', () => {
  it('maps a permanent protocol error, however wrapped, to a non-retriable internal AppError', () => {
    const wrapped = Object.assign(new Error('retries exceeded'), {
      cause: protocolError('MESSAGE_TOO_LARGE', false),
    });
    const err = toBusError(wrapped);
    expect(err).not.toBeInstanceOf(BusUnavailableError);
    expect(err).toMatchObject({ code: 'internal', retriable: false, cause: wrapped });
  });

  it('maps connection failures and unknown errors to BusUnavailableError', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), {
      name: 'KafkaJSConnectionError',
    });
    expect(toBusError(refused)).toBeInstanceOf(BusUnavailableError);
    expect(toBusError(protocolError('NOT_LEADER_FOR_PARTITION', true))).toBeInstanceOf(
      BusUnavailableError,
    );
    expect(toBusError('weird')).toMatchObject({ code: 'dependency_unavailable', retriable: true });
  });

  it('passes AppErrors through', () => {
    const err = new AppError('internal', 'x');
    expect(toBusError(err)).toBe(err);
  });
});

describe('kafkaErrorTypes', () => {
  it('collects types from causes and aggregated errors', () => {
    const aggregate = Object.assign(new Error('aggregate'), {
      errors: [protocolError('TOPIC_ALREADY_EXISTS', false), { cause: protocolError('X', true) }],
    });
    expect(kafkaErrorTypes(aggregate)).toEqual(['TOPIC_ALREADY_EXISTS', 'X']);
  });
});
