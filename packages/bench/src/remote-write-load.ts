/**
 * Prometheus remote-write 1.0 bodies and their load, shared by `bench:remote-write` and
 * `bench:compare` (the same bodies to VictoriaMetrics and to our gateway). Each body is what a
 * Prometheus queue shard sends: `seriesPerRequest` samples (100 hosts × 20 series, one sample
 * each, labels `__name__`, `job`, `instance`, `region`), snappy-compressed, each request a new
 * scrape time, so nothing is a duplicate.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { logProgress } from './harness/progress.js';
import type { CompareTarget } from './compare-target.js';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';

export type RemoteWriteOptions = {
  /**
   * Bodies sent first and not measured, earlier scrapes of the same series: the other loads
   * warm up too, and a JIT-compiled server (ours) pays its compilation in the first of them.
   */
  warmUpRequests: number;
  requests: number;
  seriesPerRequest: number;
  concurrency: number;
};

export type RemoteWriteFigures = {
  target: string;
  /** Warm-up bodies sent, and answered 2xx; their samples are stored but in no figure here. */
  warmUpRequests: number;
  warmUpOk: number;
  requests: number;
  ok: number;
  statuses: Record<string, number>;
  samplesSent: number;
  samplesStored: number;
  seconds: number;
  samplesPerSecond: number;
  /** CPU of the target's ingesting process per sample sent, microseconds. */
  cpuMicrosPerSample: number;
  cpuProcess: string;
};

/** VictoriaMetrics' count of what the remote-write bodies stored. */
const remoteWriteSeriesQuery = 'sum(count_over_time({__name__=~"rw_metric_.*"}[1d]))';

/** prompb's WriteRequest, the fields a Prometheus sender fills. */
const writeRequest = protobuf.Root.fromJSON({
  nested: {
    WriteRequest: { fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } } },
    TimeSeries: {
      fields: {
        labels: { rule: 'repeated', type: 'Label', id: 1 },
        samples: { rule: 'repeated', type: 'Sample', id: 2 },
      },
    },
    Label: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
    Sample: { fields: { value: { type: 'double', id: 1 }, timestamp: { type: 'int64', id: 2 } } },
  },
}).lookupType('WriteRequest');

export const seriesPerHost = 20;

/** The bodies every target of a run gets, the same for each. */
export type RemoteWriteBodies = {
  /** Scrapes before the measured ones (`remoteWriteBody(-1…)`), sent first, not measured. */
  warmUp: Buffer[];
  measured: Buffer[];
};

/** `options`' warm-up and measured bodies, scrape times a second apart around `baseMs`. */
export function createRemoteWriteBodies(
  options: RemoteWriteOptions,
  baseMs: number,
): RemoteWriteBodies {
  const body = (n: number) => remoteWriteBody(n, options.seriesPerRequest, baseMs);
  return {
    warmUp: Array.from({ length: options.warmUpRequests }, (_, i) => body(-1 - i)),
    measured: Array.from({ length: options.requests }, (_, n) => body(n)),
  };
}

/**
 * Remote-write bodies each side gets by default. At 300 (1 s of VictoriaMetrics' time, 600,000
 * samples) its CPU per sample ranged 0.43-0.90 µs over runs of the same bodies, so the ratio
 * against it swung by 2 x on its own; at 1,500 it held 0.57-0.64 (docs/benchmarks/compare.md,
 * 2026-11-25 07:10).
 */
export const defaultRemoteWriteRequests = 1500;

/** A series of a remote-write body: its labels (`__name__` included) and samples. */
export type RemoteWriteSeries = {
  labels: { name: string; value: string }[];
  samples: { value: number; timestamp: number }[];
};

/** A remote-write 1.0 body as a Prometheus queue shard sends it: protobuf, snappy-compressed. */
export function encodeRemoteWrite(timeseries: RemoteWriteSeries[]): Buffer {
  return snappy.compressSync(Buffer.from(writeRequest.encode({ timeseries }).finish()));
}

/** Request `n`'s body: every series once, at scrape time `baseMs + n` seconds. */
function remoteWriteBody(n: number, seriesPerRequest: number, baseMs: number): Buffer {
  const hosts = Math.ceil(seriesPerRequest / seriesPerHost);
  const timeseries: RemoteWriteSeries[] = [];
  for (let i = 0; i < seriesPerRequest; i++) {
    const host = i % hosts;
    const series = Math.floor(i / hosts);
    timeseries.push({
      labels: [
        { name: '__name__', value: `rw_metric_${series}` },
        { name: 'instance', value: `rw-host-${host}:9100` },
        { name: 'job', value: 'node' },
        { name: 'region', value: `region-${host % 4}` },
      ],
      samples: [{ value: (n * 7 + i) % 1000, timestamp: baseMs + n * 1000 }],
    });
  }
  return encodeRemoteWrite(timeseries);
}

/** Sends every body once, `concurrency` at a time; counts the answers by status. */
async function sendAll(
  target: { baseUrl: string; headers: Record<string, string> },
  bodies: Buffer[],
  concurrency: number,
): Promise<{ ok: number; statuses: Record<string, number> }> {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const url = new URL('/api/v1/write', target.baseUrl);
  const statuses: Record<string, number> = {};
  let ok = 0;
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < bodies.length) {
      const body = bodies[next++]!;
      const status = await new Promise<number>((resolve) => {
        const req = request(
          url,
          {
            method: 'POST',
            agent,
            headers: {
              ...target.headers,
              'Content-Type': 'application/x-protobuf',
              'Content-Encoding': 'snappy',
              'X-Prometheus-Remote-Write-Version': '0.1.0',
              'Content-Length': body.length,
            },
          },
          (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', () => resolve(0));
        req.end(body);
      });
      statuses[String(status)] = (statuses[String(status)] ?? 0) + 1;
      if (status >= 200 && status < 300) ok++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return { ok, statuses };
}

/**
 * Sends the warm-up bodies, then every body to `target`, and charges the CPU of its process
 * `target.pid` over the latter. `countStored` counts every sample the target stored from both;
 * the figures' `samplesStored` leaves out the warm-up's.
 */
async function measureRemoteWrite(
  name: string,
  target: { baseUrl: string; headers: Record<string, string>; pid: number },
  bodies: RemoteWriteBodies,
  options: RemoteWriteOptions,
  countStored: () => Promise<number>,
): Promise<RemoteWriteFigures> {
  logProgress(`${name}: ${bodies.warmUp.length} warm-up requests`);
  const warmUp = await sendAll(target, bodies.warmUp, options.concurrency);
  logProgress(`${name}: ${bodies.measured.length} requests of ${options.seriesPerRequest} samples`);
  const before = cpuSnapshot([{ name, pid: target.pid }]);
  const startedAt = performance.now();
  const sent = await sendAll(target, bodies.measured, options.concurrency);
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = cpuUsedBetween(before, cpuSnapshot([{ name, pid: target.pid }])).seconds;
  const samplesSent = sent.ok * options.seriesPerRequest;
  const cpuSeconds = cpu[name] ?? Number.NaN;
  return {
    target: name,
    warmUpRequests: bodies.warmUp.length,
    warmUpOk: warmUp.ok,
    requests: bodies.measured.length,
    ok: sent.ok,
    statuses: sent.statuses,
    samplesSent,
    samplesStored: (await countStored()) - warmUp.ok * options.seriesPerRequest,
    seconds,
    samplesPerSecond: samplesSent / seconds,
    cpuMicrosPerSample: (cpuSeconds * 1e6) / samplesSent,
    cpuProcess: name,
  };
}

const storedTimeoutMs = 120_000;
/** After the count reached what was sent, how long requests in flight get to land. */
const settleMs = 1_000;

/**
 * The bodies to VictoriaMetrics, or to the Kafka mode's gateway (its CPU alone is charged: the
 * decode and the publish), each counted back from its storage.
 */
export async function measureRemoteWriteTo(
  target: CompareTarget,
  bodies: RemoteWriteBodies,
  options: RemoteWriteOptions,
): Promise<RemoteWriteFigures> {
  const kafka = target.name === 'kafka';
  const processName = kafka ? 'gateway' : 'victoria-metrics';
  const pid = target.measured.find((each) => each.name === processName)?.pid();
  if (pid === undefined) throw new Error(`no pid for ${processName}`);
  const stored = (expected: number) =>
    target.waitForStored({ expected, timeoutMs: storedTimeoutMs, settleMs });
  const before = kafka ? (await stored(0)).stored : 0;
  const sent = (bodies.warmUp.length + bodies.measured.length) * options.seriesPerRequest;
  const figures = await measureRemoteWrite(
    processName,
    { baseUrl: target.baseUrl, headers: kafka ? target.headers : {}, pid },
    bodies,
    options,
    async () =>
      kafka ? (await stored(before + sent)).stored - before : countVictoriaMetrics(target.baseUrl),
  );
  logProgress(
    `${processName} remote-write: ${figures.ok}/${figures.requests} 2xx, ${figures.samplesStored} stored, ` +
      `${figures.cpuMicrosPerSample.toFixed(2)} CPU µs per sample`,
  );
  return figures;
}

/** What VictoriaMetrics stored of the remote-write bodies, once flushed. */
async function countVictoriaMetrics(baseUrl: string): Promise<number> {
  await fetch(`${baseUrl}/internal/force_flush`);
  const query = new URLSearchParams({ query: remoteWriteSeriesQuery });
  const answer = (await (await fetch(`${baseUrl}/api/v1/query?${query.toString()}`)).json()) as {
    data?: { result?: { value?: [number, string] }[] };
  };
  return Number(answer.data?.result?.[0]?.value?.[1] ?? 0);
}
