import type { BacklogFigures } from './backlog-drain.js';
import type { ReportBase } from './harness/report.js';
import type { WireFormat } from './compare-fleet.js';
import type { TargetName } from './compare-target.js';
import { targetNames } from './compare-target.js';
import type { CopyCeilingResult } from './copy-ceiling.js';
import type { RemoteWriteFigures } from './remote-write-load.js';
import { formatMachine, formatNotes, int, ms } from './report-text.js';
import type { ProcessUsage, ResourceUsage } from './resource-sampler.js';
import type { WrkFigures } from './wrk-result.js';

export const workloadNames = ['single', 'batched'] as const;
export type WorkloadName = (typeof workloadNames)[number];

/** Samples a target acknowledged, could have stored and did store over some span. */
export type StoredCheck = {
  /** Samples of the 2xx answers. */
  acknowledged: number;
  /** Samples of every request sent, in flight at the end included: the most it may store. */
  sent: number;
  /** Samples stored over the span. */
  stored: number;
  /** Acknowledged but not stored. */
  missing: number;
  /** Stored beyond what was sent: duplicates (nothing was sent twice). */
  duplicates: number;
  /** Whether the store had reached the acknowledged count before the wait ended. */
  drained: boolean;
};

type ProcessFigures = ProcessUsage & {
  cpuUsPerRequest: number | undefined;
  cpuUsPerSample: number | undefined;
};

export type WorkloadReport = {
  payloadsPerRequest: number;
  connections: number;
  load: WrkFigures;
  /** The target's processes, by name, and the load generator's (`wrk`). */
  processes: Record<string, ProcessFigures>;
  /** CPU of every process of the target (not the load generator) per acknowledged request. */
  serverCpuUsPerRequest: number | undefined;
  machineBusyPercent: number | undefined;
  /** Bytes the bus's topic grew by per acknowledged sample (Kafka mode; before replication). */
  busBytesPerSample?: number;
  stored: StoredCheck;
};

export type TargetReport = {
  format: WireFormat;
  /** Why the target did not run, when it did not. */
  skipped?: string;
  workloads: Partial<Record<WorkloadName, WorkloadReport>>;
  /** Over everything the run sent the target: smoke request, warm-ups, loads, backlog. */
  total?: StoredCheck;
};

type CompareRatios = {
  /** Embedded requests/s over VictoriaMetrics', one host per request. */
  embeddedVsVmRequestsSingle?: number;
  /** Embedded samples/s over VictoriaMetrics', batched. */
  embeddedVsVmSamplesBatched?: number;
  kafkaVsVmRequestsSingle?: number;
  kafkaVsVmSamplesBatched?: number;
  /** The gateway's CPU per request over VictoriaMetrics' CPU per request, one host per request. */
  gatewayVsVmCpuPerRequestSingle?: number;
  /** Every Kafka-mode process's CPU per request over VictoriaMetrics', one host per request. */
  kafkaServersVsVmCpuPerRequestSingle?: number;
  /** The writer draining a backlog, rows/s, over raw COPY into the same table (its best rate). */
  writerDrainVsCopy?: number;
  /** The gateway's CPU per remote-write sample over VictoriaMetrics', the same bodies. */
  gatewayVsVmCpuPerSampleRemoteWrite?: number;
};

/** The remote-write phase: the same bodies to VictoriaMetrics and to the Kafka mode's gateway. */
/** Remote-write figures per target; the gateway's with what its samples took on the bus. */
type RemoteWriteReport = Partial<
  Record<'victoria-metrics' | 'gateway', RemoteWriteFigures & { busBytesPerSample?: number }>
>;

export type CompareBenchReport = ReportBase & {
  settings: {
    hosts: number;
    valueVariants: number;
    durationSeconds: number;
    warmUpSeconds: number;
    threads: number;
    workloads: Record<WorkloadName, { payloadsPerRequest: number; connections: number }>;
    backlogSeconds: number;
    victoriaMetrics: { binary: string; version?: string };
    /** Where the Kafka mode's servers came from, e.g. `{ kafka: 'native' }`. */
    kafkaServices: Record<string, string>;
  };
  targets: Partial<Record<TargetName, TargetReport>>;
  /** Kafka mode: the writer draining what the gateway put in Kafka while it was stopped. */
  backlog?: BacklogFigures;
  /** Raw COPY into the Kafka mode's `samples` table: the best rate of `copies`. */
  copy?: CopyCeilingResult;
  /** Raw COPY on one connection and on as many as the writer writes with. */
  copies?: CopyCeilingResult[];
  remoteWrite?: RemoteWriteReport;
  /**
   * Kafka mode over sample shards: the samples each shard held after the loads. A shard's CPU
   * per sample stored on it is its server's (`postgres-s<n>`, s0's `postgres`) µs per sample
   * over its share.
   */
  shards?: { name: string; process: string; samples: number }[];
  ratios: CompareRatios;
};

/** What was stored over a span compared with what was acknowledged and sent in it. */
export function checkStored(args: {
  acknowledged: number;
  sent: number;
  storedBefore: number;
  storedAfter: number;
  drained: boolean;
}): StoredCheck {
  const stored = args.storedAfter - args.storedBefore;
  return {
    acknowledged: args.acknowledged,
    sent: args.sent,
    stored,
    missing: Math.max(0, args.acknowledged - stored),
    duplicates: Math.max(0, stored - args.sent),
    drained: args.drained,
  };
}

/** Per-process figures of a load: CPU per acknowledged request and sample, peak memory. */
export function chargeLoad(
  usage: ResourceUsage,
  load: WrkFigures,
  serverProcesses: readonly string[],
): Pick<WorkloadReport, 'processes' | 'serverCpuUsPerRequest' | 'machineBusyPercent'> {
  const per = (seconds: number | undefined, n: number): number | undefined =>
    seconds === undefined || n === 0 ? undefined : (seconds * 1e6) / n;
  const processes: Record<string, ProcessFigures> = {};
  for (const [name, used] of Object.entries(usage.byProcess)) {
    processes[name] = {
      ...used,
      cpuUsPerRequest: per(used.cpuSeconds, load.acknowledged),
      cpuUsPerSample: per(used.cpuSeconds, load.samplesAcknowledged),
    };
  }
  const serverSeconds = serverProcesses.map((name) => usage.byProcess[name]?.cpuSeconds);
  const measuredAll = serverSeconds.every((seconds) => seconds !== undefined);
  return {
    processes,
    serverCpuUsPerRequest: measuredAll
      ? per(
          serverSeconds.reduce<number>((sum, seconds) => sum + (seconds ?? 0), 0),
          load.acknowledged,
        )
      : undefined,
    machineBusyPercent: usage.machineBusyPercent,
  };
}

/** The issue's ratios, from whatever the run measured. */
export function compareRatios(
  report: Pick<CompareBenchReport, 'targets' | 'backlog' | 'copy' | 'remoteWrite'>,
): CompareRatios {
  const vm = report.targets['victoria-metrics']?.workloads;
  const embedded = report.targets.embedded?.workloads;
  const kafka = report.targets.kafka?.workloads;
  const ratio = (a: number | undefined, b: number | undefined): number | undefined =>
    a === undefined || b === undefined || b === 0 ? undefined : a / b;
  const vmCpu = vm?.single?.processes['victoria-metrics']?.cpuUsPerRequest;
  // A ratio that could not be computed stays undefined, which JSON leaves out.
  return {
    embeddedVsVmRequestsSingle: ratio(
      embedded?.single?.load.requestsPerSecond,
      vm?.single?.load.requestsPerSecond,
    ),
    embeddedVsVmSamplesBatched: ratio(
      embedded?.batched?.load.samplesPerSecond,
      vm?.batched?.load.samplesPerSecond,
    ),
    kafkaVsVmRequestsSingle: ratio(
      kafka?.single?.load.requestsPerSecond,
      vm?.single?.load.requestsPerSecond,
    ),
    kafkaVsVmSamplesBatched: ratio(
      kafka?.batched?.load.samplesPerSecond,
      vm?.batched?.load.samplesPerSecond,
    ),
    gatewayVsVmCpuPerRequestSingle: ratio(
      kafka?.single?.processes['gateway']?.cpuUsPerRequest,
      vmCpu,
    ),
    kafkaServersVsVmCpuPerRequestSingle: ratio(kafka?.single?.serverCpuUsPerRequest, vmCpu),
    writerDrainVsCopy: ratio(report.backlog?.rowsPerSecond, report.copy?.rowsPerSecond),
    gatewayVsVmCpuPerSampleRemoteWrite: ratio(
      report.remoteWrite?.gateway?.cpuMicrosPerSample,
      report.remoteWrite?.['victoria-metrics']?.cpuMicrosPerSample,
    ),
  };
}

/** One target of issue 26: what was measured against what it must reach. */
export type IssueTarget = {
  measure: string;
  target: string;
  measured: string;
  /** Undefined when the run did not measure it. */
  met: boolean | undefined;
};

/**
 * Issue 26's targets from one run. A throughput counts only when every acknowledged sample of
 * its load was stored and none twice (read back from storage).
 */
export function issueTargets(
  report: Pick<CompareBenchReport, 'targets' | 'ratios' | 'backlog' | 'copy'>,
): IssueTarget[] {
  const { ratios } = report;
  const embedded = report.targets.embedded?.workloads;
  const kafka = report.targets.kafka?.workloads;
  const exact = (w: WorkloadReport | undefined): boolean =>
    w !== undefined && w.stored.drained && w.stored.missing === 0 && w.stored.duplicates === 0;
  const atLeast = (value: number | undefined, bound: number, ok = true) =>
    value === undefined ? undefined : ok && value >= bound;
  const atMost = (value: number | undefined, bound: number) =>
    value === undefined ? undefined : value <= bound;
  const samples = (w: WorkloadReport | undefined) =>
    w === undefined
      ? '-'
      : `${int(w.load.samplesPerSecond)} samples/s${exact(w) ? ', all stored' : ', NOT all stored'}`;
  const pct = (value: number | undefined) =>
    value === undefined ? '-' : `${(value * 100).toFixed(1)} %`;
  const times = (value: number | undefined) =>
    value === undefined ? '-' : `${value.toFixed(2)} ×`;
  const rss = embedded?.batched?.processes['monitor all']?.peakMemoryBytes;
  return [
    {
      measure: 'Kafka mode, 100 hosts per request, acknowledged and stored',
      target: '≥ 200,000 samples/s',
      measured: samples(kafka?.batched),
      met: atLeast(kafka?.batched?.load.samplesPerSecond, 200_000, exact(kafka?.batched)),
    },
    {
      measure: 'embedded, 100 hosts per request',
      target: '≥ 100,000 samples/s',
      measured: samples(embedded?.batched),
      met: atLeast(embedded?.batched?.load.samplesPerSecond, 100_000, exact(embedded?.batched)),
    },
    {
      measure: 'embedded, 1 host per request, of VictoriaMetrics’ requests/s',
      target: '≥ 15 %',
      measured: pct(ratios.embeddedVsVmRequestsSingle),
      met: atLeast(ratios.embeddedVsVmRequestsSingle, 0.15, exact(embedded?.single)),
    },
    {
      measure: 'gateway CPU per request, Kafka mode, 1 host, over VictoriaMetrics’',
      target: '≤ 3 ×',
      measured: times(ratios.gatewayVsVmCpuPerRequestSingle),
      met: atMost(ratios.gatewayVsVmCpuPerRequestSingle, 3),
    },
    {
      measure: 'remote-write: gateway CPU per sample over VictoriaMetrics’',
      target: '≤ 2 ×',
      measured: times(ratios.gatewayVsVmCpuPerSampleRemoteWrite),
      met: atMost(ratios.gatewayVsVmCpuPerSampleRemoteWrite, 2),
    },
    {
      measure: 'embedded `monitor all` peak RSS, 100 hosts per request',
      target: '≤ 300 MiB',
      measured: rss === undefined ? '-' : mib(rss),
      met: atMost(rss, 300 * 1024 ** 2),
    },
    {
      measure: 'writer draining a backlog, of raw binary COPY into the same table',
      target: '≥ 60 %',
      measured:
        report.backlog === undefined || report.copy === undefined
          ? '-'
          : `${pct(ratios.writerDrainVsCopy)} (${int(report.backlog.rowsPerSecond)} of ${int(report.copy.rowsPerSecond)} rows/s)`,
      met: atLeast(ratios.writerDrainVsCopy, 0.6),
    },
  ];
}

/** Wide enough for `14,130,000 / 14,134,200` with a gap. */
const columnWidth = 24;

const ratioLabels: Record<keyof CompareRatios, string> = {
  embeddedVsVmRequestsSingle: 'embedded / VM requests/s, 1 host per request',
  embeddedVsVmSamplesBatched: 'embedded / VM samples/s, batched',
  kafkaVsVmRequestsSingle: 'Kafka mode / VM requests/s, 1 host per request',
  kafkaVsVmSamplesBatched: 'Kafka mode / VM samples/s, batched',
  gatewayVsVmCpuPerRequestSingle: 'gateway / VM CPU per request, 1 host per request',
  kafkaServersVsVmCpuPerRequestSingle: 'all Kafka-mode servers / VM CPU per request, single',
  writerDrainVsCopy: 'writer backlog drain / raw COPY rows/s',
  gatewayVsVmCpuPerSampleRemoteWrite: 'remote-write: gateway / VM CPU per sample',
};

/** The report as plain-text tables for the terminal. */
export function formatCompareReport(report: CompareBenchReport): string {
  const { settings } = report;
  const lines = [
    `Ingest comparison, ${report.date}`,
    formatMachine(report.machine),
    `${int(settings.hosts)} hosts, 3 metrics and 3 tags per host payload, the same to every target; ` +
      `wrk ${settings.threads} threads, ${settings.durationSeconds} s per load after ${settings.warmUpSeconds} s warm-up; ` +
      `VictoriaMetrics ${settings.victoriaMetrics.version ?? '(not installed)'}`,
  ];
  const ran = targetNames.filter((name) => report.targets[name]?.skipped === undefined);
  for (const workload of workloadNames) {
    const shape = settings.workloads[workload];
    lines.push(
      '',
      `${workload}: ${shape.payloadsPerRequest} host(s) per request, ${shape.connections} connections`,
      `${''.padEnd(30)}${ran.map((name) => name.padStart(columnWidth)).join('')}`,
    );
    const row = (label: string, cell: (w: WorkloadReport) => string): void => {
      const cells = ran.map((name) => {
        const figures = report.targets[name]?.workloads[workload];
        return (figures ? cell(figures) : '-').padStart(columnWidth);
      });
      lines.push(`${label.padEnd(30)}${cells.join('')}`);
    };
    row('requests/s (2xx)', (w) => int(w.load.requestsPerSecond));
    row('samples/s acknowledged', (w) => int(w.load.samplesPerSecond));
    row(
      'latency p50 / p99 (ms)',
      (w) => `${ms(w.load.latency.p50Ms)} / ${ms(w.load.latency.p99Ms)}`,
    );
    row('server CPU µs per request', (w) => optional(w.serverCpuUsPerRequest, int));
    row('acknowledged / stored', (w) => `${int(w.stored.acknowledged)} / ${int(w.stored.stored)}`);
    row('missing / duplicates', (w) => `${int(w.stored.missing)} / ${int(w.stored.duplicates)}`);
    row('unanswered at stop / failed', (w) => `${int(w.load.unanswered)} / ${int(w.load.failed)}`);
    row('machine CPU busy', (w) => optional(w.machineBusyPercent, (p) => `${p.toFixed(0)} %`));
    row('bus bytes per sample', (w) => optional(w.busBytesPerSample, (b) => b.toFixed(1)));
    lines.push('  per process: CPU s, µs per request, µs per sample, peak memory');
    for (const name of ran) {
      const figures = report.targets[name]?.workloads[workload];
      for (const [processName, p] of Object.entries(figures?.processes ?? {})) {
        lines.push(
          `    ${`${name}: ${processName}`.padEnd(36)}${optional(p.cpuSeconds, (s) => s.toFixed(1)).padStart(8)} s` +
            `${optional(p.cpuUsPerRequest, int).padStart(10)} µs/req${optional(p.cpuUsPerSample, (us) => us.toFixed(1)).padStart(10)} µs/sample` +
            `${optional(p.peakMemoryBytes, mib).padStart(11)} ${p.memory.toUpperCase()}`,
        );
      }
    }
  }

  if (report.shards !== undefined) lines.push('', ...shardLines(report));
  lines.push('', 'Kafka mode backlog');
  lines.push(
    report.backlog
      ? `  writer drained ${int(report.backlog.rowsTimed)} of ${int(report.backlog.rows)} waiting rows in ${report.backlog.seconds.toFixed(1)} s: ` +
          `${int(report.backlog.rowsPerSecond)} rows/s (writer CPU ${optional(report.backlog.writerCpuSeconds, (s) => s.toFixed(1))} s)` +
          `${report.backlog.drained ? '' : ', NOT drained before the timeout'}`
      : '  not measured',
    ...(report.copies ?? []).map(
      (copy) =>
        `  raw binary COPY into the same samples table: ${int(copy.rowsPerSecond)} rows/s ` +
        `(${int(copy.rows)} rows, ${copy.connections} connection${copy.connections === 1 ? '' : 's'})` +
        (report.backlog && copy.rowsPerSecond > 0
          ? `, the drain ${((100 * report.backlog.rowsPerSecond) / copy.rowsPerSecond).toFixed(1)} % of it`
          : ''),
    ),
  );
  if ((report.copies ?? []).length === 0) lines.push('  raw COPY: not measured');

  lines.push('', 'Remote-write 1.0, the same bodies to each');
  for (const [name, figures] of Object.entries(report.remoteWrite ?? {})) {
    lines.push(
      `  ${name.padEnd(18)}${figures.ok}/${figures.requests} 2xx after ${figures.warmUpOk}/${figures.warmUpRequests} warm-up, ` +
        `${int(figures.samplesSent)} samples sent, ` +
        `${int(figures.samplesStored)} stored, ${int(figures.samplesPerSecond)} samples/s, ` +
        `${figures.cpuMicrosPerSample.toFixed(2)} CPU µs per sample (${figures.cpuProcess})` +
        (figures.busBytesPerSample === undefined
          ? ''
          : `, ${figures.busBytesPerSample.toFixed(1)} bus bytes per sample`),
    );
  }
  if (report.remoteWrite === undefined) lines.push('  not measured');

  lines.push('', 'Ratios (same run)');
  for (const [key, label] of Object.entries(ratioLabels) as [keyof CompareRatios, string][]) {
    const value = report.ratios[key];
    lines.push(
      `  ${label.padEnd(54)}${value === undefined ? '-' : `${(value * 100).toFixed(1)} %`}`,
    );
  }

  lines.push('', 'Issue 26 targets (same run)');
  for (const row of issueTargets(report)) {
    const verdict = row.met === undefined ? 'not measured' : row.met ? 'met' : 'NOT met';
    lines.push(
      `  ${row.measure.padEnd(70)}${row.target.padEnd(22)}${row.measured.padEnd(44)}${verdict}`,
    );
  }

  lines.push('', 'Every sample sent to each target over the run (acknowledged ≤ stored ≤ sent)');
  for (const name of targetNames) {
    const target = report.targets[name];
    if (target?.skipped !== undefined) lines.push(`  ${name.padEnd(18)}skipped: ${target.skipped}`);
    else if (target?.total) {
      const t = target.total;
      lines.push(
        `  ${name.padEnd(18)}${int(t.acknowledged)} acknowledged, ${int(t.stored)} stored, ${int(t.sent)} sent: ` +
          `${int(t.missing)} missing, ${int(t.duplicates)} duplicates`,
      );
    }
  }
  lines.push(
    '',
    'Spec-shaped payloads (5 containers, 10 processes each) through the pipeline: npm run bench:ingest',
  );
  return [...lines, ...formatNotes(report)].join('\n');
}

function optional<T>(value: T | undefined, format: (value: T) => string): string {
  return value === undefined ? '?' : format(value);
}

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(0)} MiB`;
}

/** Each shard's share of the samples and its server's CPU per sample stored on it, per load. */
function shardLines(report: CompareBenchReport): string[] {
  const shards = report.shards ?? [];
  const total = shards.reduce((n, shard) => n + shard.samples, 0);
  const lines = [
    `Kafka mode over ${shards.length} sample shards: ` +
      shards
        .map(
          (s) =>
            `${s.name} ${int(s.samples)} samples (${((100 * s.samples) / total).toFixed(1)} %)`,
        )
        .join(', '),
    "  CPU µs per sample stored on the shard (its server's µs per sample over its share):",
  ];
  for (const workload of workloadNames) {
    const processes = report.targets.kafka?.workloads[workload]?.processes ?? {};
    const cells = shards.map((shard) => {
      const perSample = processes[shard.process]?.cpuUsPerSample;
      const onShard =
        perSample === undefined || total === 0 ? undefined : (perSample * total) / shard.samples;
      return `${shard.name} ${optional(onShard, (us) => us.toFixed(1))}`;
    });
    lines.push(`    ${workload.padEnd(26)}${cells.join(', ')}`);
  }
  return lines;
}
