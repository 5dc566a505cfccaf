import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

export type GetLoadOptions = {
  /** e.g. `http://127.0.0.1:8080` */
  baseUrl: string;
  /** Path and query of the `n`-th request (n = 0, 1, …), e.g. to walk over many ids. */
  path: (n: number) => string;
  headers: Readonly<Record<string, string>>;
  /** Requests in flight at all times (closed loop: each worker sends its next when answered). */
  concurrency: number;
  durationMs: number;
  /** A request unanswered after this long counts as an error (default 30 s). */
  requestTimeoutMs?: number;
};

export type GetLoadResult = {
  /** Requests answered (any status) or failed. */
  requests: number;
  /** Requests answered 200. */
  ok: number;
  /** Latency of each 200, in milliseconds, in completion order. */
  latenciesMs: Float64Array;
  /** Bytes of the 200 bodies. */
  okBodyBytes: number;
  statuses: Record<string, number>;
  errors: Record<string, number>;
  /** The first few non-200 answers and errors, for the report. */
  examples: string[];
  /** `performance.now()` when the first request went out and when the last settled. */
  startedAtMs: number;
  endedAtMs: number;
};

const maxExamples = 5;

/**
 * Drives GETs at a fixed concurrency for `durationMs`, then waits for the requests in flight.
 * One keep-alive agent with a socket per worker. Bodies are read to the end but not parsed, so
 * the load generator spends its CPU on sending, not on JSON.
 */
export async function runGetLoad(options: GetLoadOptions): Promise<GetLoadResult> {
  const { concurrency } = options;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const agent = new Agent({
    keepAlive: true,
    maxSockets: concurrency,
    maxFreeSockets: concurrency,
  });
  const latencies: number[] = [];
  const result: Omit<GetLoadResult, 'latenciesMs'> = {
    requests: 0,
    ok: 0,
    okBodyBytes: 0,
    statuses: {},
    errors: {},
    examples: [],
    startedAtMs: performance.now(),
    endedAtMs: 0,
  };
  const deadline = result.startedAtMs + options.durationMs;
  let sent = 0;
  const example = (text: string): void => {
    if (result.examples.length < maxExamples) result.examples.push(text);
  };

  /** Resolves with whether the answer was a 200; never rejects. */
  const send = (path: string): Promise<boolean> =>
    new Promise((resolve) => {
      const sentAt = performance.now();
      const req = request(new URL(path, options.baseUrl), {
        method: 'GET',
        agent,
        headers: options.headers,
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
          if (res.statusCode === 200) {
            latencies.push(now - sentAt);
            result.ok++;
            for (const chunk of chunks) result.okBodyBytes += chunk.length;
            resolve(true);
            return;
          }
          const status = String(res.statusCode);
          result.statuses[status] = (result.statuses[status] ?? 0) + 1;
          example(`${status} ${path}: ${Buffer.concat(chunks).toString('utf8').slice(0, 300)}`);
          resolve(false);
        });
      });
      req.end();
    });

  const worker = async (): Promise<void> => {
    while (performance.now() < deadline) {
      const ok = await send(options.path(sent++));
      // Back off a little after a failure so a dead server does not turn this into a busy loop.
      if (!ok) await new Promise((resolve) => setTimeout(resolve, 10));
    }
  };

  try {
    await Promise.all(Array.from({ length: concurrency }, () => worker()));
  } finally {
    agent.destroy();
  }
  result.endedAtMs = performance.now();
  return { ...result, latenciesMs: Float64Array.from(latencies) };
}
