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
import type { Cleanup } from './bench-run.js';
import { integerOption, runBenchCommand } from './bench-run.js';
import type { CompareTarget } from './compare-target.js';
import { startKafkaMonitor } from './kafka-target.js';
import type { RemoteWriteFigures, RemoteWriteOptions } from './remote-write-load.js';
import {
  defaultRemoteWriteRequests,
  measureRemoteWrite,
  remoteWriteBody,
  remoteWriteSeriesQuery,
  remoteWriteWarmUpBodies,
  seriesPerHost,
} from './remote-write-load.js';
import { formatMachine, formatNotes } from './report-text.js';
import {
  startVictoriaMetrics,
  victoriaMetricsBinary,
  victoriaMetricsInstall,
} from './victoria-metrics-target.js';
import { countSamples } from '@monitor/db/bench';

type Options = RemoteWriteOptions;

type Report = { options: Options; figures: RemoteWriteFigures[]; ratio?: number };

async function run(options: Options, report: Report, cleanup: Cleanup, logDir: string) {
  const baseMs = Date.now() - 3_600_000;
  const bodies = {
    warmUp: remoteWriteWarmUpBodies(options.warmUpRequests, options.seriesPerRequest, baseMs),
    measured: Array.from({ length: options.requests }, (_, n) =>
      remoteWriteBody(n, options.seriesPerRequest, baseMs),
    ),
  };

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
      query: remoteWriteSeriesQuery,
    });
    const answer = (await (
      await fetch(`${vm.baseUrl}/api/v1/query?${query.toString()}`)
    ).json()) as {
      data?: { result?: { value?: [number, string] }[] };
    };
    return Number(answer.data?.result?.[0]?.value?.[1] ?? 0);
  };
  report.figures.push(
    await measureRemoteWrite(
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
    await measureRemoteWrite(
      'gateway',
      { baseUrl: kafka.baseUrl, headers: kafka.headers, pid: gatewayPid },
      bodies,
      options,
      async () => {
        const expected = (options.warmUpRequests + options.requests) * options.seriesPerRequest;
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
  --warm-up N              requests sent first to each, not measured (default 100)
  --requests N             remote-write requests, each sent once (default ${defaultRemoteWriteRequests})
  --series-per-request N   samples per request (default 2000)
  --concurrency N          requests in flight (default 8)
  --out FILE               JSON results (default bench-results/remote-write-<iso date>.json)
Needs \`npm run build\` (the gateway and writer run from packages/server/dist) and
${victoriaMetricsInstall}. Kafka, PostgreSQL and Redis come from testkit or the environment.`;

await runBenchCommand({
  name: 'remote-write',
  usage,
  defaults: {
    'warm-up': '100',
    requests: String(defaultRemoteWriteRequests),
    'series-per-request': '2000',
    concurrency: '8',
  },
  parseOptions: (values) => ({
    warmUpRequests: integerOption('warm-up', values['warm-up'], 0),
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
      `${report.options.requests} requests × ${report.options.seriesPerRequest} samples, ${report.options.concurrency} in flight, after ${report.options.warmUpRequests} warm-up requests`,
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
