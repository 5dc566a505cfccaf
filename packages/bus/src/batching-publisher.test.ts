import { AppError, internalError } from '@monitor/platform';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { BatchSender, TopicMessages } from './batching-publisher.js';
import { createBatchingPublisher, messageBytes } from './batching-publisher.js';
import type { BusMessage } from './bus.js';
import { BusUnavailableError } from './bus-unavailable-error.js';

type SendCall = {
  batch: TopicMessages[];
  resolve: () => void;
  reject: (err: Error) => void;
};

function createFakeSender(): { sender: BatchSender; calls: SendCall[]; closed: () => boolean } {
  const calls: SendCall[] = [];
  let closed = false;
  return {
    calls,
    closed: () => closed,
    sender: {
      send: (batch) =>
        new Promise<void>((resolve, reject) => {
          calls.push({ batch, resolve, reject });
        }),
      close: () => {
        closed = true;
        return Promise.resolve();
      },
    },
  };
}

function message(key: string, size = 10): BusMessage {
  return { key, value: Buffer.alloc(size, 1) };
}

function keysOf(batch: TopicMessages[]): string[] {
  return batch.flatMap(({ topic, messages }) => messages.map((m) => `${topic}/${m.key}`));
}

/** Captures how a promise settled without leaving a rejection unhandled. */
function track(promise: Promise<void>): { state: () => 'pending' | 'resolved' | Error } {
  let state: 'pending' | 'resolved' | Error = 'pending';
  promise.then(
    () => (state = 'resolved'),
    (err: Error) => (state = err),
  );
  return { state: () => state };
}

describe('createBatchingPublisher', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('coalesces the publishes made within the linger time into one send', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { lingerMs: 5 });
    const a = track(publisher.publish('t', [message('a')]));
    const b = track(publisher.publish('t', [message('b'), message('c')]));
    await vi.advanceTimersByTimeAsync(4);
    expect(calls).toHaveLength(0);
    const c = track(publisher.publish('t', [message('d')]));
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toHaveLength(1);
    expect(keysOf(calls[0]!.batch)).toEqual(['t/a', 't/b', 't/c', 't/d']);
    expect([a.state(), b.state(), c.state()]).toEqual(['pending', 'pending', 'pending']);
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect([a.state(), b.state(), c.state()]).toEqual(['resolved', 'resolved', 'resolved']);
  });

  it('groups messages by topic, keeping publish order within each topic', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender });
    void publisher.publish('x', [message('1')]);
    void publisher.publish('y', [message('2')]);
    void publisher.publish('x', [message('3')]);
    await vi.advanceTimersByTimeAsync(5);
    expect(
      calls[0]!.batch.map(({ topic, messages }) => [topic, messages.map((m) => m.key)]),
    ).toEqual([
      ['x', ['1', '3']],
      ['y', ['2']],
    ]);
    calls[0]!.resolve();
  });

  it('sends at once, without waiting for the linger, when maxBatchMessages is reached', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { lingerMs: 1_000, maxBatchMessages: 3 });
    void publisher.publish('t', [message('a'), message('b')]);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(0);
    void publisher.publish('t', [message('c')]);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(keysOf(calls[0]!.batch)).toEqual(['t/a', 't/b', 't/c']);
  });

  it('splits batches at maxBatchBytes and sends them one after the other', async () => {
    const { sender, calls } = createFakeSender();
    const size = messageBytes(message('a'));
    const publisher = createBatchingPublisher({ sender }, { maxBatchBytes: size * 2 });
    const callers = ['a', 'b', 'c', 'd', 'e'].map((key) =>
      track(publisher.publish('t', [message(key)])),
    );
    await vi.advanceTimersByTimeAsync(5);
    // One batch in flight at a time: the next waits for the first acknowledgement.
    expect(calls.map((call) => keysOf(call.batch))).toEqual([['t/a', 't/b']]);
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((call) => keysOf(call.batch))).toEqual([
      ['t/a', 't/b'],
      ['t/c', 't/d'],
    ]);
    calls[1]!.resolve();
    await vi.advanceTimersByTimeAsync(5);
    expect(keysOf(calls[2]!.batch)).toEqual(['t/e']);
    calls[2]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(callers.map((caller) => caller.state())).toEqual(Array(5).fill('resolved'));
  });

  it('splits one publish larger than a cap and resolves it once every part is acknowledged', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { maxBatchMessages: 2 });
    const big = track(
      publisher.publish(
        't',
        ['a', 'b', 'c', 'd', 'e'].map((key) => message(key)),
      ),
    );
    await vi.advanceTimersByTimeAsync(0);
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    calls[1]!.resolve();
    await vi.advanceTimersByTimeAsync(5);
    expect(big.state()).toBe('pending');
    calls[2]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.map((call) => keysOf(call.batch))).toEqual([
      ['t/a', 't/b'],
      ['t/c', 't/d'],
      ['t/e'],
    ]);
    expect(big.state()).toBe('resolved');
  });

  it('sends a message larger than maxBatchBytes alone', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { maxBatchBytes: 100 });
    void publisher.publish('t', [message('small', 1)]);
    void publisher.publish('t', [message('huge', 500)]);
    void publisher.publish('t', [message('after', 1)]);
    await vi.advanceTimersByTimeAsync(5);
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    calls[1]!.resolve();
    await vi.advanceTimersByTimeAsync(5);
    expect(calls.map((call) => keysOf(call.batch))).toEqual([['t/small'], ['t/huge'], ['t/after']]);
  });

  it('keeps filling the next batch while one is in flight', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { lingerMs: 5 });
    void publisher.publish('t', [message('first')]);
    await vi.advanceTimersByTimeAsync(5);
    for (let i = 0; i < 10; i++) {
      void publisher.publish('t', [message(`m${i}`)]);
      await vi.advanceTimersByTimeAsync(3);
    }
    expect(calls).toHaveLength(1);
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(2);
    expect(calls[1]!.batch[0]!.messages).toHaveLength(10);
  });

  it('rejects only the callers whose batch failed', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { maxBatchMessages: 2 });
    const a = track(publisher.publish('t', [message('a')]));
    const b = track(publisher.publish('t', [message('b')]));
    const c = track(publisher.publish('t', [message('c')]));
    await vi.advanceTimersByTimeAsync(5);
    calls[0]!.reject(new Error('connection refused'));
    await vi.advanceTimersByTimeAsync(5);
    expect(a.state()).toBeInstanceOf(BusUnavailableError);
    expect(b.state()).toBeInstanceOf(BusUnavailableError);
    expect(c.state()).toBe('pending');
    expect(keysOf(calls[1]!.batch)).toEqual(['t/c']);
    calls[1]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(c.state()).toBe('resolved');
  });

  it('rejects with a retriable dependency_unavailable error carrying the cause and Retry-After hint', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { retryAfterSeconds: 7 });
    const a = track(publisher.publish('t', [message('a')]));
    await vi.advanceTimersByTimeAsync(5);
    const cause = new Error('broker gone');
    calls[0]!.reject(cause);
    await vi.advanceTimersByTimeAsync(0);
    const err = a.state() as BusUnavailableError;
    expect(err).toBeInstanceOf(AppError);
    expect(err).toMatchObject({
      code: 'dependency_unavailable',
      retriable: true,
      retryAfterSeconds: 7,
      reason: 'broker_error',
      cause,
    });
  });

  it('passes a permanent failure the sender classified through unchanged', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender });
    const a = track(publisher.publish('t', [message('a')]));
    await vi.advanceTimersByTimeAsync(5);
    const permanent = internalError('the message bus rejected the request (MESSAGE_TOO_LARGE)');
    calls[0]!.reject(permanent);
    await vi.advanceTimersByTimeAsync(0);
    expect(a.state()).toBe(permanent);
  });

  it('rejects with reason timeout once publishTimeoutMs passed, however long the send hangs', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { publishTimeoutMs: 100 });
    const a = track(publisher.publish('t', [message('a')]));
    await vi.advanceTimersByTimeAsync(99);
    expect(calls).toHaveLength(1);
    expect(a.state()).toBe('pending');
    await vi.advanceTimersByTimeAsync(1);
    expect(a.state()).toBeInstanceOf(BusUnavailableError);
    expect((a.state() as BusUnavailableError).reason).toBe('timeout');
    // The late acknowledgement changes nothing for the caller.
    calls[0]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect((a.state() as BusUnavailableError).reason).toBe('timeout');
  });

  it('drops the messages of an expired caller that were not sent yet', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { publishTimeoutMs: 100 });
    void publisher.publish('t', [message('a')]).catch(() => undefined);
    await vi.advanceTimersByTimeAsync(5);
    // Queued behind the hung send until its caller gave up.
    const b = track(publisher.publish('t', [message('b')]));
    await vi.advanceTimersByTimeAsync(100);
    expect(b.state()).toBeInstanceOf(BusUnavailableError);
    const c = track(publisher.publish('t', [message('c')]));
    calls[0]!.reject(new Error('request timed out'));
    await vi.advanceTimersByTimeAsync(5);
    expect(calls.map((call) => keysOf(call.batch))).toEqual([['t/a'], ['t/c']]);
    calls[1]!.resolve();
    await vi.advanceTimersByTimeAsync(0);
    expect(c.state()).toBe('resolved');
  });

  it('settles callers even when the sender throws instead of rejecting', async () => {
    const publisher = createBatchingPublisher({
      sender: {
        send: () => {
          throw new Error('not connected');
        },
        close: () => Promise.resolve(),
      },
    });
    const a = track(publisher.publish('t', [message('a')]));
    await vi.advanceTimersByTimeAsync(5);
    expect(a.state()).toBeInstanceOf(BusUnavailableError);
  });

  it('resolves an empty publish without sending', async () => {
    const { sender, calls } = createFakeSender();
    const publisher = createBatchingPublisher({ sender });
    await publisher.publish('t', []);
    await vi.advanceTimersByTimeAsync(10);
    expect(calls).toHaveLength(0);
  });

  it('flushes pending batches on close without waiting for the linger, then closes the sender', async () => {
    const { sender, calls, closed } = createFakeSender();
    const publisher = createBatchingPublisher({ sender }, { lingerMs: 1_000 });
    const a = track(publisher.publish('t', [message('a')]));
    const closing = publisher.close();
    await vi.advanceTimersByTimeAsync(0);
    expect(calls).toHaveLength(1);
    expect(closed()).toBe(false);
    const late = track(publisher.publish('t', [message('late')]));
    calls[0]!.resolve();
    await closing;
    expect(a.state()).toBe('resolved');
    expect(closed()).toBe(true);
    await vi.advanceTimersByTimeAsync(0);
    expect((late.state() as BusUnavailableError).reason).toBe('closed');
  });

  it('rejects nonsensical options', () => {
    const { sender } = createFakeSender();
    expect(() => createBatchingPublisher({ sender }, { maxBatchMessages: 0 })).toThrow(RangeError);
    expect(() => createBatchingPublisher({ sender }, { lingerMs: -1 })).toThrow(RangeError);
  });
});
