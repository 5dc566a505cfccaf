import type { ReportBase } from './harness/report.js';
import type { LatencySummary } from './latency-summary.js';
import type { HistogramSummary } from './metrics-histogram.js';
import { formatLatencyTable, formatMachine, formatNotes, int, ms } from './report-text.js';

export type PrometheusRulesBenchReport = ReportBase & {
  settings: {
    scenario: 'prometheus-rules';
    rules: number;
    groups: number;
    fleetWideRules: number;
    hosts: number;
    services: number;
    intervalSeconds: number;
    historyMinutes: number;
    warmUpSeconds: number;
    durationSeconds: number;
    probeHosts: number;
    origins: Record<string, string>;
  };
  /** From the last group loaded to every group evaluated once. */
  rulesEvaluatedAfterMs?: number;
  /** The fleet's remote-write during the measured window. */
  fleet?: { requests: number; failed: number; samplesPerSecond: number };
  /** The evaluator's figures over the measured window (its /metrics). */
  evaluations?: {
    /** Group evaluations the slots in the window call for, and those saved. */
    expected: number;
    done: number;
    ruleEvaluations: number;
    failedRules: number;
    /** How late after its slot each evaluation started, seconds. */
    lag: HistogramSummary;
    /** How long each took, queries and writes included, seconds. */
    duration: HistogramSummary;
  };
  evaluator?: { cpuSeconds: number; cpuUsPerRuleEvaluation: number | undefined };
  /** From the 204 of the probe's breaching (clearing) sample to its alert listed active (resolved). */
  probes?: { fire: LatencySummary; resolve: LatencySummary; timedOut: number };
  /** Alerts of rules other than the probe's: they must never fire (0). */
  fleetRuleAlerts?: number;
  cpuSeconds: Record<string, number>;
  machineBusyPercent?: number;
  target: { description: string; met: boolean };
};

function seconds(value: number): string {
  return Number.isFinite(value) ? `${value} s` : 'over the last bucket';
}

/** The report as plain text for the terminal. */
export function formatPrometheusRulesReport(report: PrometheusRulesBenchReport): string {
  const { settings, evaluations, probes } = report;
  const lines = [
    `Alert latency benchmark, Prometheus rules scenario, ${report.date}`,
    formatMachine(report.machine),
    `${int(settings.rules)} alerting rules in ${settings.groups} groups at ${settings.intervalSeconds} s ` +
      `(${settings.fleetWideRules} over the whole fleet, the others one service's each, 1 probe rule); ` +
      `${int(settings.hosts)} hosts in ${settings.services} services remote-writing every ` +
      `${settings.intervalSeconds} s, ${settings.historyMinutes} min of history; ` +
      `${settings.durationSeconds} s measured after ${settings.warmUpSeconds} s; ${settings.probeHosts} probe hosts`,
    '',
  ];
  if (report.rulesEvaluatedAfterMs !== undefined)
    lines.push(
      `every group evaluated ${int(report.rulesEvaluatedAfterMs)} ms after the last was loaded`,
    );
  if (report.fleet)
    lines.push(
      `fleet: ${int(report.fleet.samplesPerSecond)} samples/s, ${int(report.fleet.requests)} requests, ${report.fleet.failed} failed`,
    );
  if (evaluations) {
    const { lag, duration } = evaluations;
    lines.push(
      `group evaluations: ${int(evaluations.done)} of ${int(evaluations.expected)} slots; ` +
        `${int(evaluations.ruleEvaluations)} rule evaluations, ${evaluations.failedRules} failed`,
      `lag after the slot: mean ${ms(lag.mean * 1000)} ms; p50 ≤ ${seconds(lag.p50AtMost)}, ` +
        `p99 ≤ ${seconds(lag.p99AtMost)}, max ≤ ${seconds(lag.maxAtMost)}`,
      `group evaluation: mean ${ms(duration.mean * 1000)} ms; p50 ≤ ${seconds(duration.p50AtMost)}, ` +
        `p99 ≤ ${seconds(duration.p99AtMost)}, max ≤ ${seconds(duration.maxAtMost)}`,
    );
  }
  if (report.evaluator)
    lines.push(
      `evaluator CPU ${report.evaluator.cpuSeconds.toFixed(1)} s` +
        (report.evaluator.cpuUsPerRuleEvaluation === undefined
          ? ''
          : `, ${int(report.evaluator.cpuUsPerRuleEvaluation)} µs per rule evaluation`),
    );
  if (probes) {
    lines.push(
      '',
      ...formatLatencyTable(28, [
        ['204 → alert active', probes.fire],
        ['204 → alert resolved', probes.resolve],
      ]),
      `timed out: ${probes.timedOut}`,
    );
  }
  if (report.fleetRuleAlerts !== undefined)
    lines.push(`alerts of the fleet rules (must be 0): ${report.fleetRuleAlerts}`);
  const cpu = Object.entries(report.cpuSeconds);
  if (cpu.length > 0)
    lines.push(
      `CPU s in the measured window: ${cpu.map(([name, s]) => `${name} ${s.toFixed(1)}`).join(', ')}` +
        (report.machineBusyPercent === undefined
          ? ''
          : `; machine busy ${report.machineBusyPercent.toFixed(0)} %`),
    );
  lines.push('', `target: ${report.target.description}: ${report.target.met ? 'met' : 'NOT met'}`);
  return [...lines, ...formatNotes(report)].join('\n');
}
