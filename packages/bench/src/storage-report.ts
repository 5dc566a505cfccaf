import type { ReportBase } from './harness/report.js';
import type { LoadSummary } from './load-client.js';
import { formatMachine, formatNotes, int } from './report-text.js';
import type {
  CompressedColumn,
  HistoryExplain,
  RelationSize,
  StorageSizes,
} from '@monitor/db/bench';
import type { VictoriaMetricsSizes } from './victoria-metrics-storage.js';
import type { SteadyState } from './storage-steady-state.js';
import { formatSteadyState } from './storage-steady-state.js';
import type { KeptTierFigures } from './storage-kept-tiers.js';
import { formatKeptTiers } from './storage-kept-tiers.js';

export type { RelationSize };
/** Our storage's sizes, on either engine. */
export type TimescaleSizes = StorageSizes;

type StorageComparison = {
  samples: number;
  victoriaMetricsBytes: number;
  ourBytes: number;
  victoriaMetricsBytesPerSample: number;
  ourBytesPerSample: number;
  /** Our bytes per sample over VictoriaMetrics'. */
  ratio: number;
  /** The target: at most this many times VictoriaMetrics' bytes per sample. */
  targetRatio: number;
  met: boolean;
};

/** One storage layout measured on the same samples: the schema as shipped, or a proposal. */
export type LayoutFigures = {
  name: string;
  /** What differs from the shipped schema, as applied to the bench's database. */
  changes: string[];
  sizes: TimescaleSizes;
  /** The relations counted for this layout (all of ours but the other layout's aggregates). */
  countedBytes: number;
  comparison?: StorageComparison;
  /** Where the compressed chunks' bytes go, column by column. */
  columns: CompressedColumn[];
  /** Seconds each maintenance step of the layout took. */
  steps: Record<string, number>;
};

type QueryLatency = LoadSummary & {
  layout: string;
  step: '1m' | '1h';
  concurrency: number;
  /** Points in each answer (checked before the load). */
  points: number;
  /** The database's own time for one such read, after the load. */
  explain?: HistoryExplain;
};

export type StorageBenchReport = ReportBase & {
  settings: {
    hosts: number;
    metrics: string[];
    pointsPerSeries: number;
    intervalSeconds: number;
    jitterMs: number;
    seed: number;
    windowStart?: string;
    windowEnd?: string;
    queryConcurrency: number;
    queryDurationSeconds: number;
    victoriaMetrics: { binary: string; version: string | undefined };
    timescaledb?: string;
    /** Our storage: TimescaleDB (the target's), or plain PostgreSQL (reported, no target). */
    engine?: 'timescale' | 'postgres';
  };
  samples?: number;
  load: {
    ours?: { seconds: number; samplesPerSecond: number; connections: number; batchSamples: number };
    victoriaMetrics?: { seconds: number; samplesPerSecond: number; storedRows: number };
  };
  victoriaMetrics?: VictoriaMetricsSizes & { mergeSeconds: number };
  layouts: LayoutFigures[];
  /** Bytes per raw sample at steady state under the shipped policies (storage-steady-state.ts). */
  steadyState?: SteadyState & {
    uncompressedHoursOf: Record<string, number>;
    heldHoursOf: Record<string, number>;
    victoriaMetricsBytesPerSample: number;
    ratio: number;
  };
  /** The rollup tiers kept beyond the raw retention, a full chunk of each (storage-kept-tiers.ts). */
  keptTiers?: { tiers: KeptTierFigures[]; steps: Record<string, number> };
  queries: QueryLatency[];
};

/** A history's bytes per sample over VictoriaMetrics' (issue 25). */
const targetRatio = 2;
/** The steady state's, the newest samples counted at their largest (issue 56, item 4). */
const steadyStateTargetRatio = 1.5;

export function relationBytes(relation: RelationSize): number {
  return relation.tableBytes + relation.indexBytes + relation.toastBytes;
}

/** Bytes of the relations `include` accepts. */
export function countBytes(
  sizes: TimescaleSizes,
  include: (relation: RelationSize) => boolean,
): number {
  return sizes.relations.filter(include).reduce((total, r) => total + relationBytes(r), 0);
}

/** Bytes per sample on each side, and ours over theirs against the target. */
export function compareStorage(input: {
  samples: number;
  ourBytes: number;
  victoriaMetricsBytes: number;
}): StorageComparison {
  const { samples, ourBytes, victoriaMetricsBytes } = input;
  if (samples <= 0) throw new RangeError('no samples to compare');
  const ourBytesPerSample = ourBytes / samples;
  const victoriaMetricsBytesPerSample = victoriaMetricsBytes / samples;
  const ratio =
    victoriaMetricsBytesPerSample > 0
      ? ourBytesPerSample / victoriaMetricsBytesPerSample
      : Number.POSITIVE_INFINITY;
  return {
    samples,
    victoriaMetricsBytes,
    ourBytes,
    victoriaMetricsBytesPerSample,
    ourBytesPerSample,
    ratio,
    targetRatio,
    met: ratio <= targetRatio,
  };
}

/**
 * The latest time ≤ `nowMs` that is `uncompressedMs` past a boundary of `chunkMs` chunks
 * (aligned to the epoch, as TimescaleDB aligns them): a history ending there leaves exactly its
 * newest `uncompressedMs` in a chunk of its own, and every older sample in chunks that end
 * before it, which compression can take whole.
 */
export function historyEndMs(nowMs: number, chunkMs: number, uncompressedMs: number): number {
  return Math.floor((nowMs - uncompressedMs) / chunkMs) * chunkMs + uncompressedMs;
}

/** The report as plain text for the terminal. */
export function formatStorageReport(report: StorageBenchReport): string {
  const { settings } = report;
  const lines = [
    `Storage benchmark, ${report.date}`,
    formatMachine(report.machine),
    `fleet: ${int(settings.hosts)} hosts × ${settings.metrics.length} metrics × ${int(settings.pointsPerSeries)} points ` +
      `at ${settings.intervalSeconds} s${settings.jitterMs > 0 ? ` ± ${settings.jitterMs} ms` : ''} = ${int(report.samples ?? 0)} samples (${settings.windowStart ?? '?'} to ${settings.windowEnd ?? '?'}), seed ${settings.seed}`,
    `VictoriaMetrics ${settings.victoriaMetrics.version ?? '?'}, TimescaleDB ${settings.timescaledb ?? '?'}`,
  ];
  const { ours, victoriaMetrics } = report.load;
  if (ours) {
    lines.push(
      `load, ours (sample store, binary COPY, ${ours.connections} connections, ${int(ours.batchSamples)} samples per batch): ` +
        `${ours.seconds.toFixed(1)} s, ${int(ours.samplesPerSecond)} samples/s`,
    );
  }
  if (victoriaMetrics) {
    lines.push(
      `load, VictoriaMetrics (/api/v1/import): ${victoriaMetrics.seconds.toFixed(1)} s, ` +
        `${int(victoriaMetrics.samplesPerSecond)} samples/s, ${int(victoriaMetrics.storedRows)} rows stored`,
    );
  }
  const vm = report.victoriaMetrics;
  if (vm) {
    lines.push(
      '',
      `VictoriaMetrics after a forced merge (${vm.mergeSeconds.toFixed(1)} s): ${mib(vm.totalBytes)} ` +
        `(data ${mib(vm.dataBytes)}, indexdb ${mib(vm.indexdbBytes)}, other ${mib(vm.otherBytes)}); ` +
        `parts ${Object.entries(vm.parts)
          .map(([type, n]) => `${type} ${n}`)
          .join(', ')}`,
    );
  }
  for (const layout of report.layouts) lines.push('', ...formatLayout(layout));
  const steady = report.steadyState;
  if (steady) {
    lines.push(
      '',
      `uncompressed windows (half a chunk + compress_after + half a job interval; the raw head at its largest: a whole chunk and job interval), hours: ${Object.entries(
        steady.uncompressedHoursOf,
      )
        .map(([name, hours]) => `${name} ${hours.toFixed(1)}`)
        .join(', ')}; held for only part of the retention, hours: ${Object.entries(
        steady.heldHoursOf,
      )
        .map(([name, hours]) => `${name} ${hours.toFixed(1)}`)
        .join(', ')}`,
      ...formatSteadyState(steady),
      `  against VictoriaMetrics' ${steady.victoriaMetricsBytesPerSample.toFixed(3)}: ${steady.ratio.toFixed(2)}× ` +
        (settings.engine === 'postgres'
          ? '(plain PostgreSQL: no target)'
          : `(target ≤ ${steadyStateTargetRatio}×: ` +
            `${steady.ratio <= steadyStateTargetRatio ? 'met' : 'NOT MET'})`),
    );
  }
  const kept = report.keptTiers;
  if (kept) {
    const steps = Object.entries(kept.steps).map(([step, s]) => `${step} ${s.toFixed(1)} s`);
    lines.push('', ...formatKeptTiers(kept.tiers), `  steps: ${steps.join(', ')}`);
  }
  if (report.queries.length > 0) {
    lines.push(
      '',
      `GET /api/v1/services/:id/metrics over 24 h, random services and metrics, concurrency ${settings.queryConcurrency}, ${settings.queryDurationSeconds} s each`,
      `${'layout'.padEnd(12)}${'step'.padEnd(6)}${'points'.padStart(7)}${'req/s'.padStart(8)}${'p50 ms'.padStart(9)}` +
        `${'p95 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}${'failed'.padStart(8)}  p99 < 50 ms`,
    );
    for (const q of report.queries) {
      const failed = q.requests - q.ok;
      lines.push(
        `${q.layout.padEnd(12)}${q.step.padEnd(6)}${int(q.points).padStart(7)}${int(q.requestsPerSecond).padStart(8)}` +
          `${q.latency.p50Ms.toFixed(1).padStart(9)}${q.latency.p95Ms.toFixed(1).padStart(9)}` +
          `${q.latency.p99Ms.toFixed(1).padStart(9)}${q.latency.maxMs.toFixed(1).padStart(9)}${int(failed).padStart(8)}  ` +
          `${q.latency.p99Ms < 50 && failed === 0 ? 'met' : 'NOT MET'}`,
      );
    }
    for (const q of report.queries) {
      if (q.explain === undefined) continue;
      lines.push(
        `explain analyze, ${q.layout} step=${q.step}: execution ${q.explain.executionMs.toFixed(2)} ms, ` +
          `planning ${q.explain.planningMs.toFixed(2)} ms`,
        ...q.explain.plan.map((line) => `    ${line}`),
      );
    }
  }
  return [...lines, ...formatNotes(report)].join('\n');
}

function formatLayout(layout: LayoutFigures): string[] {
  const lines = [
    `Ours, ${layout.name}${layout.changes.length > 0 ? ':' : ' (the schema as migrate() builds it)'}`,
  ];
  for (const change of layout.changes) lines.push(`  ${change}`);
  lines.push(
    `${'relation'.padEnd(22)}${'kind'.padEnd(12)}${'table'.padStart(12)}${'indexes'.padStart(12)}${'toast'.padStart(12)}${'total'.padStart(12)}`,
  );
  for (const r of layout.sizes.relations) {
    lines.push(
      `${r.name.padEnd(22)}${r.kind.padEnd(12)}${mib(r.tableBytes).padStart(12)}${mib(r.indexBytes).padStart(12)}` +
        `${mib(r.toastBytes).padStart(12)}${mib(relationBytes(r)).padStart(12)}`,
    );
  }
  for (const c of layout.sizes.compression) {
    lines.push(
      `compression of ${c.name}: ${c.compressedChunks} of ${c.chunks} chunks, ${mib(c.beforeBytes)} → ${mib(c.afterBytes)}` +
        (c.afterBytes > 0 ? ` (${(c.beforeBytes / c.afterBytes).toFixed(1)}×)` : ''),
    );
  }
  lines.push(...formatColumns(layout.columns));
  lines.push(
    `counted: ${mib(layout.countedBytes)}; the whole database (catalogs and empty tables included): ${mib(layout.sizes.databaseBytes)}`,
  );
  const steps = Object.entries(layout.steps).map(([step, s]) => `${step} ${s.toFixed(1)} s`);
  if (steps.length > 0) lines.push(`steps: ${steps.join(', ')}`);
  const c = layout.comparison;
  if (c) {
    lines.push(
      `bytes per sample: ours ${c.ourBytesPerSample.toFixed(3)}, VictoriaMetrics ${c.victoriaMetricsBytesPerSample.toFixed(3)}: ` +
        `${c.ratio.toFixed(2)}× (target ≤ ${c.targetRatio}×: ${c.met ? 'met' : 'NOT MET'})`,
    );
  }
  return lines;
}

/** Per compressed relation: each column's bytes per row it compresses. */
function formatColumns(columns: readonly CompressedColumn[]): string[] {
  const byRelation = new Map<string, CompressedColumn[]>();
  for (const c of columns) byRelation.set(c.relation, [...(byRelation.get(c.relation) ?? []), c]);
  return [...byRelation].map(([relation, list]) => {
    const rows = list[0]?.rows ?? 0;
    const parts = list.map((c) => `${c.column} ${rows > 0 ? (c.bytes / rows).toFixed(2) : '?'}`);
    return `compressed ${relation}, bytes per row (${int(rows)} rows): ${parts.join(', ')}`;
  });
}

function mib(bytes: number): string {
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}
