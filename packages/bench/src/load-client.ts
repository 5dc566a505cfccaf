import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BodySource } from './fleet.js';

export type LoadOptions = {
  /** e.g. `http://127.0.0.1:8080/api/v1/ingest` */
  url: URL;
  headers: Readonly<Record<string, string>>;
  /** Requests in flight at all times (closed loop: each worker sends its next when answered). */
  concurrency: number;
  durationMs: number;
  bodies: BodySource;
  /** A request unanswered after this long counts as an error (default 30 s). */
  requestTimeoutMs?: number;
};

export type LoadResult = {
  /** Requests answered (any status) or failed. */
  requests: number;
  /** Requests answered 200. */
  ok: number;
  /** Sum of `events_accepted` over the 200s: samples the server acknowledged. */
  samplesAccepted: number;
  /** Latency of each 200, in milliseconds, in completion order. */
  latenciesMs: Float64Array;
  /** Answers other than 200, by status code. */
  statuses: Record<string, number>;
  /** Requests that got no answer, by error code. */
  errors: Record<string, number>;
  /** The first few non-200 answers and errors, for the report. */
  examples: string[];
  /** `performance.now()` when the first request went out. */
  startedAtMs: number;
  /** `performance.now()` when the last request settled. */
  endedAtMs: number;
  /** `performance.now()` when the last 200 arrived (`startedAtMs` if none did). */
  lastOkAtMs: number;
};

const maxExamples = 5;

/**
 * Drives `url` with POSTs at a fixed concurrency for `durationMs`, then waits for the requests
 * in flight. One keep-alive agent with a socket per worker; bodies come pre-serialized from
 * `bodies`. Only 200 answers are parsed (for `events_accepted`).
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { url, concurrency, bodies } = options;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const agent = new Agent({
    keepAlive: true,
    maxSockets: concurrency,
    maxFreeSockets: concurrency,
  });
  let latencies = new Float64Array(1 << 16);
  const result: Omit<LoadResult, 'latenciesMs'> = {
    requests: 0,
    ok: 0,
    samplesAccepted: 0,
    statuses: {},
    errors: {},
    examples: [],
    startedAtMs: performance.now(),
    endedAtMs: 0,
    lastOkAtMs: 0,
  };
  result.lastOkAtMs = result.startedAtMs;
  const deadline = result.startedAtMs + options.durationMs;

  const recordLatency = (ms: number): void => {
    if (result.ok === latencies.length) {
      const grown = new Float64Array(latencies.length * 2);
      grown.set(latencies);
      latencies = grown;
    }
    latencies[result.ok] = ms;
  };
  const example = (text: string): void => {
    if (result.examples.length < maxExamples) result.examples.push(text);
  };

  /** Resolves with whether the answer was a 200; never rejects. */
  const send = (body: Buffer): Promise<boolean> =>
    new Promise((resolve) => {
      const sentAt = performance.now();
      const req = request(url, {
        method: 'POST',
        agent,
        headers: { ...options.headers, 'content-length': String(body.length) },
        timeout: requestTimeoutMs,
      });
      req.on('timeout', () =>
        req.destroy(Object.assign(new Error('request timed out'), { code: 'ETIMEDOUT' })),
      );
      req.on('error', (err: NodeJS.ErrnoException) => {
        const code = err.code ?? err.name;
        result.requests++;
        result.errors[code] = (result.errors[code] ?? 0) + 1;
        example(`error ${code}: ${err.message}`);
        resolve(false);
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', () => undefined); // the request's error handler counts it
        res.on('end', () => {
          const now = performance.now();
          result.requests++;
          const text = Buffer.concat(chunks).toString('utf8');
          const events = res.statusCode === 200 ? eventsAccepted(text) : undefined;
          if (events !== undefined) {
            recordLatency(now - sentAt);
            result.ok++;
            result.lastOkAtMs = now;
            result.samplesAccepted += events;
          } else {
            const status =
              res.statusCode === 200 ? '200 without events_accepted' : String(res.statusCode);
            result.statuses[status] = (result.statuses[status] ?? 0) + 1;
            example(`${status}: ${text.slice(0, 300)}`);
          }
          resolve(events !== undefined);
        });
      });
      req.end(body);
    });

  const worker = async (slot: number): Promise<void> => {
    while (performance.now() < deadline) {
      const ok = await send(bodies.next(slot));
      // Back off a little after a failure so a dead server does not turn this into a busy loop.
      if (!ok) await sleep(10);
    }
  };

  try {
    await Promise.all(Array.from({ length: concurrency }, (_, slot) => worker(slot)));
  } finally {
    agent.destroy();
  }
  result.endedAtMs = performance.now();
  return { ...result, latenciesMs: latencies.slice(0, result.ok) };
}

function eventsAccepted(text: string): number | undefined {
  try {
    const body = JSON.parse(text) as { events_accepted?: unknown };
    return typeof body.events_accepted === 'number' ? body.events_accepted : undefined;
  } catch {
    return undefined;
  }
}
