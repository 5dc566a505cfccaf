import type { ReportBase } from './harness/report.js';
import type { LatencySummary } from './latency-summary.js';
import type { LoadSummary } from './load-client.js';
import { formatLatencyTable, formatMachine, formatNotes, int, ms, sum } from './report-text.js';

export type AlertsBenchReport = ReportBase & {
  settings: {
    rules: number;
    fleetRules: number;
    probeHosts: number;
    probeDurationMinutes: number;
    pollIntervalMs: number;
    hosts: number;
    concurrency: number;
    /** The fleet's pace at most; 0: as fast as the gateway answers. */
    requestsPerSecond: number;
    warmUpSeconds: number;
    durationSeconds: number;
    /** The evaluator's rule poll interval, as configured for the run. */
    evaluatorRulePollMs: string;
    origins: Record<string, string>;
  };
  /** From the last rule created to the evaluator's `evaluator_rules` gauge showing them all. */
  rulesLoadedAfterMs?: number;
  /** The fleet's load while the probes ran (the warm-up excluded). */
  fleet?: LoadSummary & { samplesPerSecond: number };
  probes?: {
    /** Probes whose alert became visible. */
    count: number;
    /** Probes whose alert did not show within the timeout. */
    timedOut: number;
    /** Probes whose alert fired but was not listed resolved within the timeout. */
    resolveTimedOut: number;
    /** From the 200 of the completing sample to the alert listed by GET /api/v1/alerts. */
    fire: LatencySummary;
    /** From the 200 of the clearing sample to the alert listed as resolved. */
    resolve: LatencySummary;
    /** From the 200 of the completing sample to the alert's investigation completed (issue 6: within 2 s). */
    investigation: LatencySummary;
    /** Fired probes whose investigation did not complete within the timeout. */
    investigationTimedOut: number;
    /** Median fire latency of the first and of the second half of the probes: a lagging evaluator shows as growth. */
    fireP50FirstHalfMs: number;
    fireP50SecondHalfMs: number;
    meanPollsToFire: number;
  };
  /**
   * The evaluator's rule evaluations per second in the measured window (its /metrics), and the
   * records the writer had stored but the evaluator not yet evaluated when the load ended, and
   * the (rule, host) states it had checkpointed by then.
   */
  evaluator?: {
    evaluationsPerSecond: number;
    /** Evaluator CPU µs per evaluation (sample × rule that applies to it) in the window. */
    cpuUsPerEvaluation?: number | undefined;
    recordsBehindWriter: number;
    statesStored: number;
  };
  /** Alerts of the fleet rules: they must never fire (0). */
  fleetRuleAlerts?: number;
  /** CPU seconds per process during the measured window, and the machine's busy share. */
  cpuSeconds: Record<string, number>;
  machineBusyPercent?: number;
  target: { description: string; p99Ms: number | undefined; met: boolean };
};

/** The report as plain text for the terminal. */
export function formatAlertsReport(report: AlertsBenchReport): string {
  const { machine, settings, fleet, probes } = report;
  const lines = [
    `Alert latency benchmark, ${report.date}`,
    formatMachine(machine),
    `${int(settings.rules)} rules (${int(settings.fleetRules)} on the fleet's metrics, never breached; ` +
      `${settings.probeHosts} probe rules, duration ${settings.probeDurationMinutes} min); ` +
      `fleet of ${int(settings.hosts)} hosts at concurrency ${settings.concurrency}` +
      (settings.requestsPerSecond > 0
        ? `, at most ${int(settings.requestsPerSecond)} requests/s; `
        : '; ') +
      `${settings.durationSeconds} s after ${settings.warmUpSeconds} s warm-up; polls every ${settings.pollIntervalMs} ms; ` +
      `EVALUATOR_RULE_POLL_MS ${settings.evaluatorRulePollMs}`,
    '',
  ];
  if (report.rulesLoadedAfterMs !== undefined)
    lines.push(
      `rules loaded by the evaluator ${int(report.rulesLoadedAfterMs)} ms after the last was created`,
    );
  if (fleet) {
    lines.push(
      `fleet during the probes: ${int(fleet.requestsPerSecond)} requests/s, ${int(fleet.samplesPerSecond)} samples/s, ` +
        `p50 ${fleet.latency.p50Ms.toFixed(1)} ms, p99 ${fleet.latency.p99Ms.toFixed(1)} ms, ` +
        `${int(sum(fleet.statuses) + sum(fleet.errors))} failed of ${int(fleet.requests)}`,
    );
  }
  if (probes) {
    lines.push(
      '',
      ...formatLatencyTable(30, [
        ['200 → alert visible (fired)', probes.fire],
        ['200 → alert resolved', probes.resolve],
        ['200 → investigation completed', probes.investigation],
      ]),
      `timed out: ${probes.timedOut} firing, ${probes.resolveTimedOut} resolving, ${probes.investigationTimedOut} investigating; median fire latency first half ${ms(probes.fireP50FirstHalfMs)} ms, ` +
        `second half ${ms(probes.fireP50SecondHalfMs)} ms; ${probes.meanPollsToFire.toFixed(1)} polls per alert`,
    );
  }
  if (report.evaluator) {
    lines.push(
      `evaluator: ${int(report.evaluator.evaluationsPerSecond)} rule evaluations/s` +
        (report.evaluator.cpuUsPerEvaluation === undefined
          ? '; '
          : ` at ${report.evaluator.cpuUsPerEvaluation.toFixed(3)} µs of CPU each; `) +
        `${int(report.evaluator.recordsBehindWriter)} records behind the writer when the load ended; ` +
        `${int(report.evaluator.statesStored)} (rule, host) states checkpointed`,
    );
  }
  if (report.fleetRuleAlerts !== undefined)
    lines.push(`alerts of the fleet rules (must be 0): ${report.fleetRuleAlerts}`);
  const cpu = Object.entries(report.cpuSeconds);
  if (cpu.length > 0) {
    lines.push(
      `CPU s in the measured window: ${cpu.map(([name, s]) => `${name} ${s.toFixed(1)}`).join(', ')}` +
        (report.machineBusyPercent === undefined
          ? ''
          : `; machine busy ${report.machineBusyPercent.toFixed(0)} %`),
    );
  }
  const { target } = report;
  lines.push(
    '',
    `target: ${target.description}: p99 ${target.p99Ms === undefined ? '?' : `${ms(target.p99Ms)} ms`}, ${target.met ? 'met' : 'NOT met'}`,
  );
  return [...lines, ...formatNotes(report)].join('\n');
}
