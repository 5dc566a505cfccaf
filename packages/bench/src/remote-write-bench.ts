/**
 * `npm run bench:remote-write`: Prometheus remote-write 1.0 batches, the same ones, to
 * VictoriaMetrics' own `/api/v1/write` and to our gateway (Kafka mode, `monitor gateway` +
 * `monitor writer` from the build), in one run. Each batch is what a Prometheus queue shard sends:
 * `--series-per-request` samples (default 2,000: 100 hosts × 20 series, one sample each, labels
 * `__name__`, `job`, `instance`, `region`), snappy-compressed, each request a new scrape time, so
 * nothing is a duplicate. Every body is sent exactly once; the report gives each server's CPU per
 * sample (its process only: VictoriaMetrics with its storage, our gateway's decode and publish)
 * and what each stored. With `--samples histogram` each series sends a native histogram instead
 * (24 buckets, as a Prometheus with native histograms sends them): histograms per second, CPU
 * per histogram, and what each stored (VictoriaMetrics keeps none).
 *
 * Needs `npm run build` and `apt-get install victoria-metrics`. No start step: `measure` starts each
 * target in turn, alone on the machine.
 */
import { integerOption } from './harness/command-line.js';
import type { BenchContext } from './harness/run-bench.js';
import { measureEachAlone, runBench } from './harness/run-bench.js';
import { startKafkaMonitor } from './kafka-target.js';
import type {
  RemoteWriteBodies,
  RemoteWriteFigures,
  RemoteWriteOptions,
} from './remote-write-load.js';
import {
  createRemoteWriteBodies,
  defaultRemoteWriteRequests,
  measureRemoteWriteTo,
  seriesPerHost,
} from './remote-write-load.js';
import { formatMachine, formatNotes } from './report-text.js';
import {
  startVictoriaMetrics,
  victoriaMetricsBinary,
  victoriaMetricsInstall,
} from './victoria-metrics-target.js';

type Options = RemoteWriteOptions;

function sampleKind(value: string): 'float' | 'histogram' {
  if (value !== 'float' && value !== 'histogram') {
    throw new Error('--samples must be float or histogram');
  }
  return value;
}

type Report = { options: Options; figures: RemoteWriteFigures[]; ratio?: number };

/** The same bodies to VictoriaMetrics, then to our gateway; our CPU per sample over theirs. */
async function measure(
  _: void,
  { options, report, cleanup }: BenchContext<Options, Report>,
  bodies: RemoteWriteBodies,
): Promise<void> {
  const { logDir } = report;
  await measureEachAlone(
    ['victoria-metrics', 'kafka'] as const,
    (name) =>
      name === 'kafka'
        ? startKafkaMonitor({ logDir, cleanup })
        : startVictoriaMetrics({ binary: victoriaMetricsBinary, logDir, cleanup }),
    async (target) => {
      report.figures.push(await measureRemoteWriteTo(target, bodies, options));
    },
  );
  const [theirs, ours] = report.figures;
  if (ours !== undefined && theirs !== undefined)
    report.ratio = ours.cpuMicrosPerSample / theirs.cpuMicrosPerSample;
}

const usage = `Usage: npm run bench:remote-write -- [options]
  --warm-up N              requests sent first to each, not measured (default 100)
  --requests N             remote-write requests, each sent once (default ${defaultRemoteWriteRequests})
  --series-per-request N   samples per request (default 2000)
  --concurrency N          requests in flight (default 8)
  --samples KIND           float, or histogram: each series a native histogram of 24 buckets
                           (default float)
  --out FILE               JSON results (default bench-results/remote-write-<iso date>.json)
Needs \`npm run build\` (the gateway and writer run from packages/server/dist) and
${victoriaMetricsInstall}. Kafka, PostgreSQL and Redis come from testkit or the environment.`;

await runBench({
  name: 'remote-write',
  usage,
  defaults: {
    'warm-up': '100',
    requests: String(defaultRemoteWriteRequests),
    'series-per-request': '2000',
    concurrency: '8',
    samples: 'float',
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
    histograms: sampleKind(values.samples) === 'histogram',
  }),
  createReport: (options): Report => ({ options, figures: [] }),
  // Scrape times a second apart from an hour back.
  seed: (_, { options }) =>
    Promise.resolve(createRemoteWriteBodies(options, Date.now() - 3_600_000)),
  measure,
  format: (report) => {
    const rows = report.figures.map((each) => [
      each.target,
      `${each.ok}/${each.requests}`,
      each.samplesSent.toLocaleString('en-US'),
      each.samplesStored.toLocaleString('en-US'),
      Math.round(each.samplesPerSecond).toLocaleString('en-US'),
      each.cpuMicrosPerSample.toFixed(2),
    ]);
    const unit = report.options.histograms ? 'histograms' : 'samples';
    const one = report.options.histograms ? 'histogram' : 'sample';
    const header = ['process', '2xx', `${unit} sent`, 'stored', `${unit}/s`, `CPU µs/${one}`];
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
      `${report.options.requests} requests × ${report.options.seriesPerRequest} ${unit}, ${report.options.concurrency} in flight, after ${report.options.warmUpRequests} warm-up requests`,
      '',
      line(header),
      ...rows.map(line),
      '',
      report.ratio === undefined || report.options.histograms
        ? ''
        : `gateway CPU per sample = ${report.ratio.toFixed(2)} × VictoriaMetrics' (target ≤ 2)`,
      ...formatNotes(report),
    ].join('\n');
  },
});
