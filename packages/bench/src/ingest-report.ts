import type { CopyCeilingResult } from './copy-ceiling.js';
import type { StoreCeilingResult } from './store-ceiling.js';
import type { LoadSummary } from './load-client.js';
import type { ReportBase } from './harness/report.js';
import { formatMachine, formatNotes, int, ms, sum } from './report-text.js';

export type PhaseName = 'single' | 'batched';

/** What a load run against one server measured, as the report shows it. */
export type LoadFigures = LoadSummary & {
  payloadsPerRequest: number;
  concurrency: number;
  /** Largest request body sent. */
  bodyBytes: number;
  durationSeconds: number;
  samplesAccepted: number;
  samplesPerSecond: number;
};

export type PhaseReport = LoadFigures & {
  landed: {
    /** Rows `samples` had to hold: what it held before plus the samples acknowledged. */
    expected: number;
    /** Rows it held when the phase started. */
    storedBefore: number;
    /** Rows it held after draining and settling. */
    stored: number;
    missing: number;
    extra: number;
    drained: boolean;
    /** New rows over the time from the phase's first request to the poll that saw them all. */
    samplesPerSecond: number;
    /** From the last 200 to the poll that saw every acknowledged sample stored. */
    lagMs: number;
    /** The lag is exact to within this (the time between that poll and the one before). */
    lagResolutionMs: number;
  };
  /** From the writer's /metrics, over the phase and its drain. */
  writer?: {
    samplesWritten: number;
    batches: number;
    writeSeconds: number;
    rowsPerWriteSecond: number;
  };
  /** CPU seconds used during the load (not the drain), and the machine's busy share. */
  cpu: {
    gatewaySeconds?: number;
    writerSeconds?: number;
    loadGeneratorSeconds: number;
    machineBusyPercent?: number;
  };
};

/** One target of the issue, the figure that decides it, and whether it was met. */
type TargetCheck = {
  value: number | boolean | undefined;
  unit: 'ratio' | 'samples/s' | 'yes/no';
  target: string;
  met: boolean;
};

export type IngestBenchReport = ReportBase & {
  settings: {
    hosts: number;
    durationSeconds: number;
    concurrency: number;
    batchConcurrency: number;
    /** Hosts per batched request (at most the requested batch size, fewer if 1 MiB demands it). */
    batchHosts: number;
    payloadBytes: number;
    maxIngestBodyBytes: number;
    services: Record<string, string>;
    writerBatchMaxMessages?: string;
    writerBatchMaxWaitMs?: string;
  };
  phases: Partial<Record<PhaseName, PhaseReport>>;
  ceilings: {
    bareHttp?: LoadFigures;
    copy?: CopyCeilingResult;
    /** The writer's own storage code on one connection, without Kafka or decoding. */
    store?: StoreCeilingResult;
  };
  ratios: {
    /** Gateway single-payload requests/s over the bare node:http ceiling (target ≥ 0.5). */
    gatewayVsBare?: number;
    /** Batched phase: samples landed per second end to end over COPY rows/s (target ≥ 0.6). */
    writerLandedVsCopy?: number;
    /** The writer's rows per second of its own write time over COPY rows/s. */
    writerBusyVsCopy?: number;
    /** The storage ceiling over COPY rows/s: the most any writer can reach of the COPY target. */
    storeVsCopy?: number;
    /** The writer draining a backlog over the storage ceiling. */
    backlogVsStore?: number;
  };
  loss: { acknowledged: number; stored: number; missing: number; extra: number; zeroLoss: boolean };
  targets: Record<string, TargetCheck>;
};

/** The report as a plain-text table for the terminal. */
export function formatIngestReport(report: IngestBenchReport): string {
  const { machine, settings, phases, ceilings, ratios, loss } = report;
  const lines: string[] = [];
  lines.push(
    `Ingest benchmark, ${report.date}`,
    formatMachine(machine),
    `${settings.hosts} hosts, ${settings.durationSeconds} s per phase, payload ${settings.payloadBytes} B ` +
      `(3 metrics, 3 tags, 5 containers, 10 processes); services: ` +
      Object.entries(settings.services)
        .map(([name, origin]) => `${name} ${origin}`)
        .join(', '),
    '',
  );

  const single = phases.single;
  const batched = phases.batched;
  const row = (label: string, f: (phase: PhaseReport) => string): string =>
    `${label.padEnd(34)}${(single ? f(single) : '-').padStart(18)}${(batched ? f(batched) : '-').padStart(18)}`;
  lines.push(
    `${'Pipeline (gateway → Kafka → writer → PostgreSQL)'.padEnd(34)}${'single'.padStart(18)}${'batched'.padStart(18)}`,
    row('hosts per request', (p) => int(p.payloadsPerRequest)),
    row('concurrency', (p) => int(p.concurrency)),
    row('request body', (p) => `${int(p.bodyBytes)} B`),
    row('requests (200 / all)', (p) => `${int(p.ok)} / ${int(p.requests)}`),
    row('gateway requests/s', (p) => int(p.requestsPerSecond)),
    row('gateway samples/s acknowledged', (p) => int(p.samplesPerSecond)),
    row('latency p50 / p99 (ms)', (p) => `${ms(p.latency.p50Ms)} / ${ms(p.latency.p99Ms)}`),
    row('latency max (ms)', (p) => ms(p.latency.maxMs)),
    row('samples landed/s, end to end', (p) => int(p.landed.samplesPerSecond)),
    row(
      'lag last 200 → all stored (ms)',
      (p) => `${int(p.landed.lagMs)} ±${int(p.landed.lagResolutionMs)}`,
    ),
    row('writer rows/s of write time', (p) => (p.writer ? int(p.writer.rowsPerWriteSecond) : '?')),
    row(
      'rows stored / samples acknowledged',
      (p) => `${int(p.landed.stored - p.landed.storedBefore)} / ${int(p.samplesAccepted)}`,
    ),
    row('missing / extra', (p) => `${int(p.landed.missing)} / ${int(p.landed.extra)}`),
    row('non-200 answers / errors', (p) => `${int(sum(p.statuses))} / ${int(sum(p.errors))}`),
    row(
      'CPU s: gateway / writer / client',
      (p) =>
        `${sec(p.cpu.gatewaySeconds)} / ${sec(p.cpu.writerSeconds)} / ${sec(p.cpu.loadGeneratorSeconds)}`,
    ),
    row('machine CPU busy during load', (p) =>
      p.cpu.machineBusyPercent === undefined ? '?' : `${p.cpu.machineBusyPercent.toFixed(0)} %`,
    ),
    '',
    'Ceilings (same run, same machine)',
  );
  const bare = ceilings.bareHttp;
  lines.push(
    bare
      ? `  bare node:http + JSON.parse + zod   ${int(bare.requestsPerSecond)} requests/s at concurrency ${bare.concurrency}` +
          ` (p50 ${ms(bare.latency.p50Ms)} ms, p99 ${ms(bare.latency.p99Ms)} ms, ${int(sum(bare.statuses) + sum(bare.errors))} failed)`
      : '  bare node:http: not measured',
  );
  const copy = ceilings.copy;
  lines.push(
    copy
      ? `  raw COPY into samples               ${int(copy.rowsPerSecond)} rows/s (${int(copy.rows)} rows in ${copy.batches} batches of ${int(copy.rowsPerBatch)}, one connection)`
      : '  raw COPY: not measured',
  );
  const store = ceilings.store;
  lines.push(
    store
      ? `  the writer's storage alone          ${int(store.rowsPerSecond)} rows/s (${int(store.hostSamples)} host samples with snapshots and services, ${store.batches} transactions, ${store.connections} connection(s) at once)`
      : "  the writer's storage alone: not measured",
    '',
    'Ratios and targets',
  );
  for (const [name, target] of Object.entries(report.targets)) {
    lines.push(
      `  ${name.padEnd(44)}${display(target).padStart(12)}   target ${target.target.padEnd(12)} ${target.met ? 'met' : 'NOT met'}`,
    );
  }
  if (ratios.storeVsCopy !== undefined) {
    lines.push(
      `  ${"writer's storage alone / COPY rows/s".padEnd(44)}${pct(ratios.storeVsCopy).padStart(12)}   (the most a writer can reach)`,
    );
  }
  if (ratios.backlogVsStore !== undefined) {
    lines.push(
      `  ${'writer draining a backlog / storage alone'.padEnd(44)}${pct(ratios.backlogVsStore).padStart(12)}`,
    );
  }
  if (ratios.writerBusyVsCopy !== undefined) {
    lines.push(
      `  ${'writer rows/s of write time / COPY rows/s'.padEnd(44)}${pct(ratios.writerBusyVsCopy).padStart(12)}   (for profiling)`,
    );
  }
  lines.push(
    `  loss over the run: ${int(loss.acknowledged)} acknowledged, ${int(loss.stored)} stored, ` +
      `${int(loss.missing)} missing, ${int(loss.extra)} extra`,
  );
  return [...lines, ...formatNotes(report)].join('\n');
}

function display(check: TargetCheck): string {
  const { value } = check;
  if (value === undefined) return '?';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return check.unit === 'ratio' ? pct(value) : int(value);
}

function sec(value: number | undefined): string {
  return value === undefined ? '?' : value.toFixed(1);
}

function pct(ratio: number): string {
  return `${(ratio * 100).toFixed(1)} %`;
}
