import type { MessagePort } from 'node:worker_threads';
import { AppError } from '@monitor/platform';
import type { BusMessage, Publisher } from './bus.js';
import { BusUnavailableError, defaultRetryAfterSeconds } from './bus-unavailable-error.js';
import type { BusUnavailableReason } from './bus-unavailable-error.js';

/**
 * A publisher on one side of a `MessagePort` whose publishes are carried out by a publisher on
 * the other side (`servePublisher`), in another thread of the process. Role `all` answers HTTP
 * on the main thread and stores on a second one, so both cores work; the in-process bus lives
 * with the consumers, and its answer (for role `all`: the samples are stored and evaluated)
 * comes back through the port.
 */

type PublishRequest = {
  id: number;
  topic: string;
  keys: string[];
  headers: (Record<string, string> | undefined)[];
  /** Every value back to back in one transferred buffer: one transfer per publish, not per message. */
  values: ArrayBuffer;
  lengths: number[];
};

type PublishFailure =
  | { kind: 'bus_unavailable'; reason: BusUnavailableReason; retryAfterSeconds: number }
  | {
      kind: 'app_error';
      code: AppError['code'];
      message: string;
      retriable: boolean;
      retryAfterSeconds: number | undefined;
    }
  | { kind: 'other'; message: string };

type PublishReply = { id: number; failure?: PublishFailure };

/**
 * Posts what is queued in one turn of the event loop as one message: under load many requests
 * publish in the same turn, and every message wakes the other thread (measured: one message per
 * publish cost about a quarter more CPU per request than the single-threaded process).
 */
function createBatchPoster<T>(port: MessagePort, transfersOf: (item: T) => ArrayBuffer[]) {
  let queue: T[] = [];
  let transfers: ArrayBuffer[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const batch = queue;
    const list = transfers;
    queue = [];
    transfers = [];
    port.postMessage(batch, list);
  };
  return (item: T): void => {
    queue.push(item);
    transfers.push(...transfersOf(item));
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

/** The publishing side. Rejects like the served publisher does, and with `closed` once the port is gone. */
export function createPortPublisher(port: MessagePort): Publisher {
  const pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  let nextId = 0;
  let portOpen = true;
  let closed = false;

  const failAll = (): void => {
    portOpen = false;
    for (const { reject } of pending.values()) reject(new BusUnavailableError('closed'));
    pending.clear();
  };
  port.on('message', (replies: PublishReply[]) => {
    for (const reply of replies) {
      const waiter = pending.get(reply.id);
      if (waiter === undefined) continue;
      pending.delete(reply.id);
      if (reply.failure === undefined) waiter.resolve();
      else waiter.reject(errorOf(reply.failure));
    }
  });
  port.on('close', failAll);
  const post = createBatchPoster<PublishRequest>(port, (request) => [request.values]);

  const inFlight = new Set<Promise<void>>();
  return {
    publish(topic, messages) {
      if (closed || !portOpen) return Promise.reject(new BusUnavailableError('closed'));
      if (messages.length === 0) return Promise.resolve();
      const request = packRequest(nextId++, topic, messages);
      const published = new Promise<void>((resolve, reject) => {
        pending.set(request.id, { resolve, reject });
      });
      post(request);
      inFlight.add(published);
      const forget = (): void => void inFlight.delete(published);
      published.then(forget, forget);
      return published;
    },
    async close() {
      closed = true;
      // Flushes what is pending: every publish in flight gets its answer (or the port closes).
      await Promise.allSettled([...inFlight]);
    },
  };
}

/**
 * The serving side: carries out every publish that arrives on `port` with `publisher` and
 * answers it. `close` stops taking publishes, waits for those in flight, and closes the port.
 */
export function servePublisher(
  port: MessagePort,
  publisher: Publisher,
): { close(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  let closing = false;
  const post = createBatchPoster<PublishReply>(port, () => []);
  port.on('message', (requests: PublishRequest[]) => {
    // The publishes that arrived together go out as one per topic, so a publisher that packs
    // records (`packRecords`) packs concurrent requests' hosts together; each still gets its own
    // answer, that of the shared publish.
    const byTopic = new Map<string, PublishRequest[]>();
    for (const request of requests) {
      if (closing) {
        post({ id: request.id, failure: failureOf(new BusUnavailableError('closed')) });
        continue;
      }
      const same = byTopic.get(request.topic);
      if (same === undefined) byTopic.set(request.topic, [request]);
      else same.push(request);
    }
    for (const [topic, together] of byTopic) {
      const answer = (failure?: PublishFailure): void => {
        for (const { id } of together) post(failure === undefined ? { id } : { id, failure });
      };
      const done = publisher.publish(topic, together.flatMap(unpackMessages)).then(
        () => answer(),
        (err: unknown) => answer(failureOf(err)),
      );
      inFlight.add(done);
      void done.finally(() => inFlight.delete(done));
    }
  });
  return {
    async close() {
      closing = true;
      await Promise.allSettled([...inFlight]);
      await new Promise((resolve) => setImmediate(resolve)); // the last answers go out first
      port.close();
    },
  };
}

function packRequest(id: number, topic: string, messages: readonly BusMessage[]): PublishRequest {
  let total = 0;
  for (const message of messages) total += message.value.byteLength;
  const values = new Uint8Array(total);
  const lengths: number[] = [];
  let offset = 0;
  for (const message of messages) {
    values.set(message.value, offset);
    offset += message.value.byteLength;
    lengths.push(message.value.byteLength);
  }
  return {
    id,
    topic,
    keys: messages.map((message) => message.key),
    headers: messages.map((message) => message.headers),
    values: values.buffer,
    lengths,
  };
}

function unpackMessages(request: PublishRequest): BusMessage[] {
  const messages: BusMessage[] = [];
  let offset = 0;
  for (let i = 0; i < request.keys.length; i++) {
    const length = request.lengths[i] ?? 0;
    const headers = request.headers[i];
    messages.push({
      key: request.keys[i] ?? '',
      value: Buffer.from(request.values, offset, length),
      ...(headers === undefined ? {} : { headers }),
    });
    offset += length;
  }
  return messages;
}

function failureOf(err: unknown): PublishFailure {
  if (err instanceof BusUnavailableError) {
    return {
      kind: 'bus_unavailable',
      reason: err.reason,
      retryAfterSeconds: err.retryAfterSeconds ?? defaultRetryAfterSeconds,
    };
  }
  if (err instanceof AppError) {
    const { code, message, retriable, retryAfterSeconds } = err;
    return { kind: 'app_error', code, message, retriable, retryAfterSeconds };
  }
  return { kind: 'other', message: err instanceof Error ? err.message : String(err) };
}

function errorOf(failure: PublishFailure): Error {
  switch (failure.kind) {
    case 'bus_unavailable':
      return new BusUnavailableError(failure.reason, {
        retryAfterSeconds: failure.retryAfterSeconds,
      });
    case 'app_error':
      return new AppError(failure.code, failure.message, {
        retriable: failure.retriable,
        ...(failure.retryAfterSeconds === undefined
          ? {}
          : { retryAfterSeconds: failure.retryAfterSeconds }),
      });
    case 'other':
      return new Error(`publish failed in the consuming thread: ${failure.message}`);
  }
}
