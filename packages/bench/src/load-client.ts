import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BodySource } from './fleet.js';
import type { LatencySummary } from './latency-summary.js';
import { summarizeLatencies } from './latency-summary.js';

type LoadOptions = {
  /** e.g. `http://127.0.0.1:8080` */
  baseUrl: string;
  /** Path and query of the `n`-th request (n = 0, 1, …), e.g. to walk over many ids. */
  path: (n: number) => string;
  /**
   * Given, the requests POST these pre-serialized bodies and a 200 counts only with
   * `events_accepted` in it; without, they are GETs.
   */
  bodies?: BodySource;
  headers: Readonly<Record<string, string>>;
  /** Requests in flight at all times (closed loop: each worker sends its next when answered). */
  concurrency: number;
  durationMs: number;
  /**
   * Given, the workers together send at most this many requests per second (a fleet's steady
   * rate rather than the machine's ceiling); each still waits for its answer before the next.
   */
  maxRequestsPerSecond?: number;
};

export type LoadResult = {
  /** Requests answered (any status) or failed. */
  requests: number;
  /** Requests answered 200. */
  ok: number;
  /** Sum of `events_accepted` over the 200s: samples the server acknowledged (0 for GETs). */
  samplesAccepted: number;
  /** Bytes of the 200 bodies. */
  okBodyBytes: number;
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
  /** From `startedAtMs` to `endedAtMs`. */
  seconds: number;
};

const maxExamples = 5;
/** A request unanswered after this long counts as an error. */
const requestTimeoutMs = 30_000;

/**
 * Drives requests at a fixed concurrency for `durationMs`, then waits for the requests in
 * flight. One keep-alive agent with a socket per worker. Only 200 answers to POSTs are parsed
 * (for `events_accepted`), so the load generator spends its CPU on sending, not on JSON.
 */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const { concurrency, bodies } = options;
  const agent = new Agent({
    keepAlive: true,
    maxSockets: concurrency,
    maxFreeSockets: concurrency,
  });
  const latencies: number[] = [];
  const result: Omit<LoadResult, 'latenciesMs' | 'seconds'> = {
    requests: 0,
    ok: 0,
    samplesAccepted: 0,
    okBodyBytes: 0,
    statuses: {},
    errors: {},
    examples: [],
    startedAtMs: performance.now(),
    endedAtMs: 0,
    lastOkAtMs: 0,
  };
  result.lastOkAtMs = result.startedAtMs;
  const deadline = result.startedAtMs + options.durationMs;
  let sent = 0;
  const example = (text: string): void => {
    if (result.examples.length < maxExamples) result.examples.push(text);
  };

  /** Resolves with whether the answer was a 200 that counts; never rejects. */
  const send = (path: string, body: Buffer | undefined): Promise<boolean> =>
    new Promise((resolve) => {
      const sentAt = performance.now();
      const req = request(new URL(path, options.baseUrl), {
        method: body ? 'POST' : 'GET',
        agent,
        headers: body
          ? { ...options.headers, 'content-length': String(body.length) }
          : options.headers,
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
          const answer = Buffer.concat(chunks);
          const events = res.statusCode !== 200 ? undefined : body ? eventsAccepted(answer) : 0;
          if (events === undefined) {
            const status =
              res.statusCode === 200 ? '200 without events_accepted' : String(res.statusCode);
            result.statuses[status] = (result.statuses[status] ?? 0) + 1;
            example(`${status} ${path}: ${answer.toString('utf8').slice(0, 300)}`);
            resolve(false);
            return;
          }
          latencies.push(now - sentAt);
          result.ok++;
          result.lastOkAtMs = now;
          result.samplesAccepted += events;
          result.okBodyBytes += answer.length;
          resolve(true);
        });
      });
      req.end(body);
    });

  const pace = options.maxRequestsPerSecond;
  const worker = async (slot: number): Promise<void> => {
    while (performance.now() < deadline) {
      if (pace !== undefined) {
        const dueAtMs = result.startedAtMs + (sent / pace) * 1000;
        if (dueAtMs > performance.now()) await sleep(dueAtMs - performance.now());
        if (performance.now() >= deadline) break;
      }
      const ok = await send(options.path(sent++), bodies?.next(slot));
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
  return {
    ...result,
    latenciesMs: Float64Array.from(latencies),
    seconds: (result.endedAtMs - result.startedAtMs) / 1000,
  };
}

/** The figures every benchmark reports of a load run. */
export type LoadSummary = Pick<
  LoadResult,
  'requests' | 'ok' | 'statuses' | 'errors' | 'examples'
> & {
  requestsPerSecond: number;
  latency: LatencySummary;
};

export function summarizeLoad(load: LoadResult): LoadSummary {
  return {
    requests: load.requests,
    ok: load.ok,
    requestsPerSecond: load.ok / load.seconds,
    latency: summarizeLatencies(load.latenciesMs),
    statuses: load.statuses,
    errors: load.errors,
    examples: load.examples,
  };
}

function eventsAccepted(answer: Buffer): number | undefined {
  try {
    const body = JSON.parse(answer.toString('utf8')) as { events_accepted?: unknown };
    return typeof body.events_accepted === 'number' ? body.events_accepted : undefined;
  } catch {
    return undefined;
  }
}
