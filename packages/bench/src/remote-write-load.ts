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
  /** Each series sends a native histogram (24 buckets, integer counts) instead of a float. */
  histograms: boolean;
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
const remoteWriteSeriesQuery = 'sum(count_over_time({__name__=~"rw_(metric|latency)_.*"}[1d]))';

/** prompb's WriteRequest, the fields a Prometheus sender fills. */
const writeRequest = protobuf.Root.fromJSON({
  nested: {
    WriteRequest: { fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } } },
    TimeSeries: {
      fields: {
        labels: { rule: 'repeated', type: 'Label', id: 1 },
        samples: { rule: 'repeated', type: 'Sample', id: 2 },
        histograms: { rule: 'repeated', type: 'Histogram', id: 4 },
      },
    },
    Label: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
    Sample: { fields: { value: { type: 'double', id: 1 }, timestamp: { type: 'int64', id: 2 } } },
    // An integer native histogram, as Prometheus' queue sends one (types.proto).
    Histogram: {
      fields: {
        countInt: { type: 'uint64', id: 1 },
        sum: { type: 'double', id: 3 },
        schema: { type: 'sint32', id: 4 },
        zeroThreshold: { type: 'double', id: 5 },
        zeroCountInt: { type: 'uint64', id: 6 },
        positiveSpans: { rule: 'repeated', type: 'BucketSpan', id: 11 },
        positiveDeltas: { rule: 'repeated', type: 'sint64', id: 12, options: { packed: true } },
        timestamp: { type: 'int64', id: 15 },
      },
    },
    BucketSpan: {
      fields: { offset: { type: 'sint32', id: 1 }, length: { type: 'uint32', id: 2 } },
    },
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
  const body = (n: number) =>
    remoteWriteBody(n, options.seriesPerRequest, baseMs, options.histograms);
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
  histograms?: RemoteWriteHistogram[];
};

type RemoteWriteHistogram = {
  countInt: number;
  sum: number;
  schema: number;
  zeroThreshold: number;
  zeroCountInt: number;
  positiveSpans: { offset: number; length: number }[];
  positiveDeltas: number[];
  timestamp: number;
};

/** Latency buckets of schema 3 from 7.8 ms up (24 of them, to about 62 ms). */
const histogramBuckets = 24;

/**
 * Series `i`'s latency histogram at scrape `n`: a counter, every bucket grown by what the
 * scrapes before added, counts sent as deltas as Prometheus sends them.
 */
function latencyHistogram(n: number, i: number, timestamp: number): RemoteWriteHistogram {
  const counts = Array.from(
    { length: histogramBuckets },
    (_, j) => (n + 200) * (1 + ((j * 7 + i) % 5)),
  );
  const count = counts.reduce((a, b) => a + b, 0);
  return {
    countInt: count,
    sum: count * 0.031,
    schema: 3,
    zeroThreshold: 2.938735877055719e-39,
    zeroCountInt: 0,
    positiveSpans: [{ offset: -56, length: histogramBuckets }],
    positiveDeltas: counts.map((c, j) => c - (j === 0 ? 0 : counts[j - 1]!)),
    timestamp,
  };
}

/** A remote-write 1.0 body as a Prometheus queue shard sends it: protobuf, snappy-compressed. */
export function encodeRemoteWrite(timeseries: RemoteWriteSeries[]): Buffer {
  return snappy.compressSync(Buffer.from(writeRequest.encode({ timeseries }).finish()));
}

/**
 * Request `n`'s body: every series once, at scrape time `baseMs + n` seconds; with `histograms`,
 * a native histogram each (`rw_latency_*`) instead of a float.
 */
function remoteWriteBody(
  n: number,
  seriesPerRequest: number,
  baseMs: number,
  histograms: boolean,
): Buffer {
  const hosts = Math.ceil(seriesPerRequest / seriesPerHost);
  const timeseries: RemoteWriteSeries[] = [];
  const timestamp = baseMs + n * 1000;
  for (let i = 0; i < seriesPerRequest; i++) {
    const host = i % hosts;
    const series = Math.floor(i / hosts);
    const name = histograms ? `rw_latency_${series}_seconds` : `rw_metric_${series}`;
    timeseries.push({
      labels: [
        { name: '__name__', value: name },
        { name: 'instance', value: `rw-host-${host}:9100` },
        { name: 'job', value: 'node' },
        { name: 'region', value: `region-${host % 4}` },
      ],
      ...(histograms
        ? { samples: [], histograms: [latencyHistogram(n, i, timestamp)] }
        : { samples: [{ value: (n * 7 + i) % 1000, timestamp }] }),
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
    // At least 0: a target that keeps none of them (VictoriaMetrics' histograms) stores no warm-up.
    samplesStored: Math.max(0, (await countStored()) - warmUp.ok * options.seriesPerRequest),
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
  const waitForStored =
    options.histograms && target.waitForStoredHistograms !== undefined
      ? target.waitForStoredHistograms.bind(target)
      : target.waitForStored.bind(target);
  const stored = (expected: number) =>
    waitForStored({ expected, timeoutMs: storedTimeoutMs, settleMs });
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
