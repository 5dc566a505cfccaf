/**
 * `npm run bench:remote-write`: Prometheus remote-write 1.0 batches, the same ones, to
 * VictoriaMetrics' own `/api/v1/write` and to our gateway (Kafka mode, `monitor gateway` +
 * `monitor writer` from the build), in one run. Each batch is what a Prometheus queue shard sends:
 * `--series-per-request` samples (default 2,000: 100 hosts × 20 series, one sample each, labels
 * `__name__`, `job`, `instance`, `region`), snappy-compressed, each request a new scrape time, so
 * nothing is a duplicate. Every body is sent exactly once; the report gives each server's CPU per
 * sample (its process only: VictoriaMetrics with its storage, our gateway's decode and publish)
 * and what each stored.
 *
 * Needs `npm run build` and `apt-get install victoria-metrics`.
 */
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';
import protobuf from 'protobufjs';
import snappy from 'snappy';
import type { Cleanup } from './bench-run.js';
import { integerOption, logProgress, runBenchCommand } from './bench-run.js';
import type { CompareTarget } from './compare-target.js';
import { startKafkaMonitor } from './kafka-target.js';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';
import { formatMachine, formatNotes } from './report-text.js';
import {
  startVictoriaMetrics,
  victoriaMetricsBinary,
  victoriaMetricsInstall,
} from './victoria-metrics-target.js';
import { countSamples } from './wait-for-landed.js';

type Options = {
  requests: number;
  seriesPerRequest: number;
  concurrency: number;
};

type TargetFigures = {
  target: string;
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

type Report = { options: Options; figures: TargetFigures[]; ratio?: number };

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

const seriesPerHost = 20;

/** Request `n`'s body: every series once, at scrape time `baseMs + n` seconds. */
function requestBody(n: number, seriesPerRequest: number, baseMs: number): Buffer {
  const hosts = Math.ceil(seriesPerRequest / seriesPerHost);
  const timeseries = [];
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
  return snappy.compressSync(Buffer.from(writeRequest.encode({ timeseries }).finish()));
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

async function measure(
  name: string,
  target: { baseUrl: string; headers: Record<string, string>; pid: number },
  bodies: Buffer[],
  options: Options,
  countStored: () => Promise<number>,
): Promise<TargetFigures> {
  logProgress(`${name}: ${bodies.length} requests of ${options.seriesPerRequest} samples`);
  const before = cpuSnapshot([{ name, pid: target.pid }]);
  const startedAt = performance.now();
  const sent = await sendAll(target, bodies, options.concurrency);
  const seconds = (performance.now() - startedAt) / 1000;
  const cpu = cpuUsedBetween(before, cpuSnapshot([{ name, pid: target.pid }])).seconds;
  const samplesSent = sent.ok * options.seriesPerRequest;
  const cpuSeconds = cpu[name] ?? Number.NaN;
  return {
    target: name,
    requests: bodies.length,
    ok: sent.ok,
    statuses: sent.statuses,
    samplesSent,
    samplesStored: await countStored(),
    seconds,
    samplesPerSecond: samplesSent / seconds,
    cpuMicrosPerSample: (cpuSeconds * 1e6) / samplesSent,
    cpuProcess: name,
  };
}

async function run(options: Options, report: Report, cleanup: Cleanup, logDir: string) {
  const baseMs = Date.now() - 3_600_000;
  const bodies = Array.from({ length: options.requests }, (_, n) =>
    requestBody(n, options.seriesPerRequest, baseMs),
  );

  const vm: CompareTarget = await startVictoriaMetrics({
    binary: victoriaMetricsBinary,
    logDir,
    cleanup,
  });
  const vmPid = vm.measured[0]?.pid();
  if (vmPid === undefined) throw new Error('no VictoriaMetrics pid');
  const vmCount = async (): Promise<number> => {
    await fetch(`${vm.baseUrl}/internal/force_flush`);
    const query = new URLSearchParams({
      query: 'sum(count_over_time({__name__=~"rw_metric_.*"}[1d]))',
    });
    const answer = (await (
      await fetch(`${vm.baseUrl}/api/v1/query?${query.toString()}`)
    ).json()) as {
      data?: { result?: { value?: [number, string] }[] };
    };
    return Number(answer.data?.result?.[0]?.value?.[1] ?? 0);
  };
  report.figures.push(
    await measure(
      'victoria-metrics',
      { baseUrl: vm.baseUrl, headers: {}, pid: vmPid },
      bodies,
      options,
      vmCount,
    ),
  );
  await vm.stop();

  const kafka = await startKafkaMonitor({ logDir, cleanup });
  const gatewayPid = kafka.measured.find((each) => each.name === 'gateway')?.pid();
  if (gatewayPid === undefined) throw new Error('no gateway pid');
  report.figures.push(
    await measure(
      'gateway',
      { baseUrl: kafka.baseUrl, headers: kafka.headers, pid: gatewayPid },
      bodies,
      options,
      async () => {
        const expected = options.requests * options.seriesPerRequest;
        await kafka.waitForStored({ expected, timeoutMs: 120_000, settleMs: 2_000 });
        return countSamples(kafka.stack.db);
      },
    ),
  );
  await kafka.stop();
  const [ours, theirs] = [report.figures[1], report.figures[0]];
  if (ours !== undefined && theirs !== undefined) {
    report.ratio = ours.cpuMicrosPerSample / theirs.cpuMicrosPerSample;
  }
}

const usage = `Usage: npm run bench:remote-write -- [options]
  --requests N             remote-write requests, each sent once (default 300)
  --series-per-request N   samples per request (default 2000)
  --concurrency N          requests in flight (default 8)
  --out FILE               JSON results (default bench-results/remote-write-<iso date>.json)
Needs \`npm run build\` (the gateway and writer run from packages/server/dist) and
${victoriaMetricsInstall}. Kafka, PostgreSQL and Redis come from testkit or the environment.`;

await runBenchCommand({
  name: 'remote-write',
  usage,
  defaults: { requests: '300', 'series-per-request': '2000', concurrency: '8' },
  parseOptions: (values) => ({
    requests: integerOption('requests', values.requests),
    seriesPerRequest: integerOption(
      'series-per-request',
      values['series-per-request'],
      seriesPerHost,
    ),
    concurrency: integerOption('concurrency', values.concurrency),
  }),
  createReport: (options): Report => ({ options, figures: [] }),
  run: (options, report, cleanup) => run(options, report, cleanup, report.logDir),
  format: (report) => {
    const rows = report.figures.map((each) => [
      each.target,
      `${each.ok}/${each.requests}`,
      each.samplesSent.toLocaleString('en-US'),
      each.samplesStored.toLocaleString('en-US'),
      Math.round(each.samplesPerSecond).toLocaleString('en-US'),
      each.cpuMicrosPerSample.toFixed(2),
    ]);
    const header = ['process', '2xx', 'samples sent', 'stored', 'samples/s', 'CPU µs/sample'];
    const widths = header.map((title, i) =>
      Math.max(title.length, ...rows.map((row) => row[i]!.length)),
    );
    const line = (cells: string[]) =>
      cells
        .map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!)))
        .join('  ');
    return [
      `bench:remote-write — ${report.date}`,
      formatMachine(report.machine),
      `${report.options.requests} requests × ${report.options.seriesPerRequest} samples, ${report.options.concurrency} in flight`,
      '',
      line(header),
      ...rows.map(line),
      '',
      report.ratio === undefined
        ? ''
        : `gateway CPU per sample = ${report.ratio.toFixed(2)} × VictoriaMetrics' (target ≤ 2)`,
      ...formatNotes(report),
    ].join('\n');
  },
});
