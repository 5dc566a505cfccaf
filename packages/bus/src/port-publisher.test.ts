import { MessageChannel } from 'node:worker_threads';
import { AppError } from '@monitor/platform';
import { afterEach, describe, expect, it } from 'vitest';
import type { Bus, ConsumedRecord, Publisher } from './bus.js';
import { BusUnavailableError } from './bus-unavailable-error.js';
import { createInProcessBus } from './in-process-bus.js';
import { createPortPublisher, servePublisher } from './port-publisher.js';

/** A served publisher that fails every publish with `err`. */
function failingWith(err: Error): Publisher {
  return { publish: () => Promise.reject(err), close: () => Promise.resolve() };
}

describe('createPortPublisher / servePublisher', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function connect(served: Publisher): {
    publisher: Publisher;
    server: { close(): Promise<void> };
  } {
    const { port1, port2 } = new MessageChannel();
    const server = servePublisher(port2, served);
    const publisher = createPortPublisher(port1);
    cleanups.push(() => port1.close());
    return { publisher, server };
  }

  it('publishes the requests that arrive together as one publish per topic, answering each', async () => {
    const calls: { topic: string; keys: string[] }[] = [];
    const recording: Publisher = {
      publish: (topic, messages) => {
        calls.push({ topic, keys: messages.map((message) => message.key) });
        return Promise.resolve();
      },
      close: () => Promise.resolve(),
    };
    const { publisher, server } = connect(recording);
    cleanups.push(() => server.close());
    await Promise.all([
      publisher.publish('a', [{ key: 'a1', value: Buffer.from('1') }]),
      publisher.publish('b', [{ key: 'b1', value: Buffer.from('2') }]),
      publisher.publish('a', [
        { key: 'a2', value: Buffer.from('3') },
        { key: 'a3', value: Buffer.from('4') },
      ]),
    ]);
    expect(calls).toEqual([
      { topic: 'a', keys: ['a1', 'a2', 'a3'] },
      { topic: 'b', keys: ['b1'] },
    ]);
  });

  it('carries keys, values and headers across the port, and answers once the consumer handled them', async () => {
    const bus: Bus = createInProcessBus({ defaultPartitions: 1 });
    cleanups.push(() => bus.close());
    const seen: ConsumedRecord[] = [];
    await bus.subscribe({
      groupId: 'writer',
      topics: ['t'],
      fromBeginning: true,
      handleBatch: async (batch) => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        seen.push(...batch.records);
      },
    });
    const { publisher, server } = connect(bus.publisher({ ackAfterConsumedBy: ['writer'] }));
    cleanups.push(() => server.close());

    const values = ['', 'a', 'é'.repeat(300), '{"v":1}'];
    await publisher.publish(
      't',
      values.map((value, i) => ({
        key: `k${i}`,
        value: Buffer.from(value),
        ...(i === 1 ? { headers: { h: 'x' } } : {}),
      })),
    );

    // Answered only after the consumer's handler ran: acknowledged means processed.
    expect(seen.map((record) => record.value?.toString())).toEqual(values);
    expect(seen.map((record) => record.key)).toEqual(['k0', 'k1', 'k2', 'k3']);
    expect(seen[1]?.headers).toEqual({ h: 'x' });
  });

  it('rejects with the error of the serving side, typed the same', async () => {
    const unavailable = connect(
      failingWith(new BusUnavailableError('timeout', { retryAfterSeconds: 7 })),
    );
    const refused = connect(
      failingWith(new AppError('dependency_unavailable', 'db down', { retryAfterSeconds: 2 })),
    );
    const bug = connect(failingWith(new TypeError('boom')));
    const message = [{ key: 'k', value: Buffer.from('x') }];

    const busError = await unavailable.publisher.publish('t', message).catch((err: unknown) => err);
    expect(busError).toBeInstanceOf(BusUnavailableError);
    expect(busError).toMatchObject({ reason: 'timeout', retryAfterSeconds: 7, retriable: true });

    const appError = await refused.publisher.publish('t', message).catch((err: unknown) => err);
    expect(appError).toBeInstanceOf(AppError);
    expect(appError).toMatchObject({ code: 'dependency_unavailable', retryAfterSeconds: 2 });

    const other = await bug.publisher.publish('t', message).catch((err: unknown) => err);
    expect(other).not.toBeInstanceOf(AppError);
    expect(String(other)).toMatch(/boom/);
    for (const side of [unavailable, refused, bug]) await side.server.close();
  });

  it('rejects what is in flight with BusUnavailableError when the other side goes away', async () => {
    let release = (): void => undefined;
    const never: Publisher = {
      publish: () => new Promise<void>((resolve) => (release = resolve)),
      close: () => Promise.resolve(),
    };
    const { port1, port2 } = new MessageChannel();
    servePublisher(port2, never);
    const publisher = createPortPublisher(port1);
    const inFlight = publisher.publish('t', [{ key: 'k', value: Buffer.from('x') }]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    port2.close();
    await expect(inFlight).rejects.toMatchObject({ reason: 'closed' });
    await expect(
      publisher.publish('t', [{ key: 'k', value: Buffer.from('y') }]),
    ).rejects.toBeInstanceOf(BusUnavailableError);
    release();
  });

  it('close waits for the publishes in flight on both sides', async () => {
    let release = (): void => undefined;
    const slow: Publisher = {
      publish: () => new Promise<void>((resolve) => (release = resolve)),
      close: () => Promise.resolve(),
    };
    const { publisher, server } = connect(slow);
    let answered = false;
    const inFlight = publisher.publish('t', [{ key: 'k', value: Buffer.from('x') }]).then(() => {
      answered = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    const closing = Promise.all([publisher.close(), server.close()]);
    await expect(
      publisher.publish('t', [{ key: 'k', value: Buffer.from('y') }]),
    ).rejects.toMatchObject({ reason: 'closed' });
    release();
    await closing;
    await inFlight;
    expect(answered).toBe(true);
  });
});
