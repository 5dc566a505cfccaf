import type { MachineFacts, ReportBase } from './harness/report.js';
import type { LatencySummary } from './latency-summary.js';

/** Text pieces every benchmark's terminal report is made of. */

/** The machine the figures come from, for the report's second line. */
export function formatMachine(machine: MachineFacts): string {
  return (
    `${machine.cpuModel} × ${machine.cpuCount}, ${(machine.totalMemoryBytes / 1024 ** 3).toFixed(1)} GiB, ` +
    `Node ${machine.node}, ${machine.os}, load average at start ${machine.loadAverageAtStart.join(' ')}`
  );
}

/** The closing section: the run's notes and what its processes logged at warn or above. */
export function formatNotes(report: ReportBase): string[] {
  const warnings = Object.entries(report.logWarnings).filter(([, w]) => w.count > 0);
  if (warnings.length === 0 && report.notes.length === 0) return [];
  const lines = ['', 'Notes', ...report.notes.map((note) => `  - ${note}`)];
  for (const [name, w] of warnings) {
    lines.push(`  - ${name} logged ${w.count} line(s) at warn or above, first:`);
    for (const line of w.first) lines.push(`      ${line.slice(0, 240)}`);
  }
  return lines;
}

export function sum(counts: Record<string, number>): number {
  return Object.values(counts).reduce((total, n) => total + n, 0);
}

export function int(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

export function ms(value: number): string {
  return value.toFixed(value < 10 ? 2 : 1);
}

/** A table of latencies, a row per label (padded to `labelWidth`): count, p50, p90, p99, max. */
export function formatLatencyTable(
  labelWidth: number,
  rows: readonly (readonly [label: string, latencies: LatencySummary])[],
): string[] {
  const line = (label: string, count: string, values: string[]) =>
    `${label.padEnd(labelWidth)}${count.padStart(7)}${values.map((v) => v.padStart(10)).join('')}`;
  return [
    line('', 'count', ['p50 ms', 'p90 ms', 'p99 ms', 'max ms']),
    ...rows.map(([label, s]) =>
      line(label, int(s.count), [ms(s.p50Ms), ms(s.p90Ms), ms(s.p99Ms), ms(s.maxMs)]),
    ),
  ];
}
