import type { ReportBase } from './harness/report.js';
import type { LoadSummary } from './load-client.js';
import { formatMachine, formatNotes, int, sum } from './report-text.js';

/** One query of the API benchmark under load. */
export type QueryFigures = LoadSummary & {
  name: string;
  /** The first path requested (the detail query walks over every service). */
  examplePath: string;
  /** `pagination.total` the API had to report (checked before the load). */
  expectedTotal?: number;
  concurrency: number;
  durationSeconds: number;
  meanBodyBytes: number;
  /** CPU of the api process during the load, per answered request. */
  apiCpuMsPerRequest?: number;
  machineBusyPercent?: number;
};

export type ExplainFigures = {
  /** Which call of `listServices` was explained. */
  call: string;
  statement: string;
  plan: string[];
  /** Indexes the plan reads, by name. */
  indexes: string[];
  /** The plan reads services in name order from an index, with no Sort node over them. */
  orderFromIndex: boolean;
};

export type ApiBenchReport = ReportBase & {
  settings: {
    services: number;
    otherOrgServices: number;
    concurrency: number;
    durationSeconds: number;
    warmUpSeconds: number;
    staleAfterSeconds: number;
    origins: Record<string, string>;
  };
  seeded?: {
    byStatus: Record<string, number>;
    byEnvironment: Record<string, number>;
    alertRows: number;
    snapshotRows: number;
    seedSeconds: number;
  };
  queries: QueryFigures[];
  explain?: ExplainFigures;
};

/** The report as a plain-text table for the terminal. */
export function formatApiReport(report: ApiBenchReport): string {
  const { machine, settings } = report;
  const lines = [
    `Query API benchmark, ${report.date}`,
    formatMachine(machine),
    `${int(settings.services)} services in the measured organization, ${int(settings.otherOrgServices)} in another; ` +
      `concurrency ${settings.concurrency}, ${settings.durationSeconds} s per query after ${settings.warmUpSeconds} s warm-up`,
  ];
  if (report.seeded) {
    const { byStatus, byEnvironment } = report.seeded;
    lines.push(
      `seeded: ${entries(byStatus)}; environments ${entries(byEnvironment)}; ` +
        `${int(report.seeded.alertRows)} alert rows, ${int(report.seeded.snapshotRows)} snapshots, in ${report.seeded.seedSeconds.toFixed(1)} s`,
    );
  }
  lines.push(
    '',
    `${'query'.padEnd(34)}${'total'.padStart(7)}${'req/s'.padStart(9)}${'p50 ms'.padStart(9)}` +
      `${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}${'body B'.padStart(9)}${'CPU ms/req'.padStart(12)}${'failed'.padStart(8)}`,
  );
  for (const q of report.queries) {
    const failed = sum(q.statuses) + sum(q.errors);
    lines.push(
      `${q.name.padEnd(34)}${(q.expectedTotal === undefined ? '-' : int(q.expectedTotal)).padStart(7)}` +
        `${int(q.requestsPerSecond).padStart(9)}${q.latency.p50Ms.toFixed(1).padStart(9)}` +
        `${q.latency.p99Ms.toFixed(1).padStart(9)}${q.latency.maxMs.toFixed(1).padStart(9)}` +
        `${int(q.meanBodyBytes).padStart(9)}` +
        `${(q.apiCpuMsPerRequest === undefined ? '?' : q.apiCpuMsPerRequest.toFixed(2)).padStart(12)}` +
        `${int(failed).padStart(8)}`,
    );
  }
  const explain = report.explain;
  if (explain) {
    lines.push(
      '',
      `explain (analyze, buffers) of ${explain.call}:`,
      ...explain.plan.map((line) => `  ${line}`),
      `order from an index: ${explain.orderFromIndex ? 'yes' : 'NO'} (indexes read: ${explain.indexes.join(', ') || 'none'})`,
    );
  }
  return [...lines, ...formatNotes(report)].join('\n');
}

function entries(counts: Record<string, number>): string {
  return Object.entries(counts)
    .map(([name, n]) => `${name} ${int(n)}`)
    .join(', ');
}
