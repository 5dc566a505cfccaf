/** What one ingest request was answered; `status` 0 when no answer came (refused, reset, timeout). */
export type IngestAttempt = {
  sentAtMs: number;
  answeredAtMs: number;
  /** Index of the gateway it was sent to. */
  gateway: number;
  status: number;
  /** The Retry-After header of a 503, as sent. */
  retryAfter: string | null;
};

export type IngestLoadOptions = {
  key: string;
  /** The gateways' base URLs as they are now: a restarted gateway listens on a new port. */
  gateways: () => readonly string[];
  hosts: readonly string[];
  hostsPerRequest: number;
  /** Sample time of round `r`: `baseMs + r * stepMs`. */
  baseMs: number;
  stepMs: number;
  /** The one metric's value of a host in a round. */
  value: (host: string, round: number) => number;
  metric: string;
  /** Bounds: the load stops after this many rounds or this long, whichever comes first. */
  maxRounds: number;
  maxDurationMs: number;
  /** Rounds start at most this often. */
  roundIntervalMs: number;
  /** An unanswered request is given up (and retried) after this long. */
  requestTimeoutMs: number;
};

export type IngestLoad = {
  /** Every request made so far, in the order they were answered. */
  readonly attempts: readonly IngestAttempt[];
  /** `host|timeMs` of every sample a 200 acknowledged; each is acknowledged once. */
  readonly acknowledged: ReadonlySet<string>;
  /** Rounds whose every sample was acknowledged. */
  roundsDone(): number;
  /** Asks the load to stop after the round in flight and resolves once it has. */
  stop(): Promise<void>;
  /** Resolves when the load ended (bounds reached or `stop`). */
  readonly finished: Promise<void>;
};

/** The key of a sample in `acknowledged` and in the assertions on what was stored. */
export function sampleKey(host: string, timeMs: number): string {
  return `${host}|${timeMs}`;
}

/**
 * An agent fleet under a bounded load: round after round, every host sends one sample of the
 * round's time, `hostsPerRequest` hosts per request, the round's requests in parallel and
 * spread over the gateways. A request that is not answered 200 is sent again, to the next
 * gateway, until it is (honouring Retry-After up to 2 s), so each host's samples reach the
 * gateways in time order and a round starts only once the previous one was acknowledged: what
 * an agent that buffers through an outage does. Only 200s count as acknowledged.
 */
export function startIngestLoad(options: IngestLoadOptions): IngestLoad {
  const attempts: IngestAttempt[] = [];
  const acknowledged = new Set<string>();
  const startedAtMs = Date.now();
  const deadlineMs = startedAtMs + options.maxDurationMs;
  let stopping = false;
  let rounds = 0;
  const shouldEnd = (): boolean => stopping || Date.now() >= deadlineMs;

  async function post(gateway: number, body: string): Promise<IngestAttempt> {
    const urls = options.gateways();
    const sentAtMs = Date.now();
    let status = 0;
    let retryAfter: string | null = null;
    try {
      const response = await fetch(`${urls[gateway % urls.length]}/api/v1/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': options.key },
        body,
        signal: AbortSignal.timeout(options.requestTimeoutMs),
      });
      await response.arrayBuffer();
      status = response.status;
      retryAfter = response.headers.get('retry-after');
    } catch {
      // refused, reset or timed out: no answer, status 0
    }
    const attempt = {
      sentAtMs,
      answeredAtMs: Date.now(),
      gateway: gateway % urls.length,
      status,
      retryAfter,
    };
    attempts.push(attempt);
    return attempt;
  }

  /** Sends one request until a 200 (true) or the load ends (false). */
  async function deliver(
    first: number,
    payloads: { host: string; timeMs: number }[],
    round: number,
  ) {
    const body = JSON.stringify(
      payloads.map(({ host, timeMs }) => ({
        host,
        timestamp: new Date(timeMs).toISOString(),
        metrics: { [options.metric]: options.value(host, round) },
      })),
    );
    for (let gateway = first; ; gateway += 1) {
      const attempt = await post(gateway, body);
      if (attempt.status === 200) {
        for (const { host, timeMs } of payloads) acknowledged.add(sampleKey(host, timeMs));
        return true;
      }
      if (Date.now() >= deadlineMs) return false;
      const retryAfterMs = Number(attempt.retryAfter) * 1000;
      await sleep(
        Number.isFinite(retryAfterMs) && retryAfterMs > 0 ? Math.min(retryAfterMs, 2_000) : 100,
      );
    }
  }

  async function run(): Promise<void> {
    const gatewayCount = Math.max(1, options.gateways().length);
    for (let round = 0; round < options.maxRounds && !shouldEnd(); round += 1) {
      const roundStartMs = Date.now();
      const timeMs = options.baseMs + round * options.stepMs;
      const requests: Promise<boolean>[] = [];
      for (let i = 0; i < options.hosts.length; i += options.hostsPerRequest) {
        const hosts = options.hosts.slice(i, i + options.hostsPerRequest);
        const first = (round + i / options.hostsPerRequest) % gatewayCount;
        requests.push(
          deliver(
            first,
            hosts.map((host) => ({ host, timeMs })),
            round,
          ),
        );
      }
      const delivered = await Promise.all(requests);
      if (!delivered.every(Boolean)) return;
      rounds = round + 1;
      await sleep(roundStartMs + options.roundIntervalMs - Date.now());
    }
  }

  const finished = run();
  return {
    attempts,
    acknowledged,
    roundsDone: () => rounds,
    async stop() {
      stopping = true;
      await finished;
    },
    finished,
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}
