import type { ReportBase } from './bench-run.js';
import type { StallSummary } from './failover-stall.js';
import type { LatencySummary } from './latency-summary.js';
import type { PacedLoadResult } from './paced-load.js';
import { formatMachine, formatNotes, int } from './report-text.js';

/** A consumer's "joined consumer group" log line after an event. */
export type ObservedJoin = {
  process: string;
  groupId: string;
  /** From the event to the join, by the process's own log clock. */
  afterMs: number;
  partitions: number[];
};

export type FailoverEvent = {
  name: string;
  /** Which pipeline the event hits: the writer (ack → queryable) or the evaluator (alerts). */
  role: 'writer' | 'evaluator';
  /** Seconds from the start of the load. */
  atSeconds: number;
  /** Sample → alert visible (the evaluator's partitions). */
  alert: StallSummary;
  /** Acknowledged → queryable through the services API (the writer's partitions). */
  stored: StallSummary;
  joins: ObservedJoin[];
  /** The replica started during the stall: when it first joined (its group waited for the dead member's session, no longer). */
  joinerJoinedAfterMs?: number | undefined;
  /** The stall of the role's own pipeline is within the target; undefined: no target (a join). */
  met: boolean | undefined;
};

export type FailoverBenchReport = ReportBase & {
  settings: {
    partitions: number;
    hosts: number;
    payloadsPerRequest: number;
    requestsPerSecond: number;
    baselineSeconds: number;
    observeSeconds: number;
    stepIntervalMs: number;
    pollIntervalMs: number;
    /** KAFKA_SESSION_TIMEOUT_MS and KAFKA_HEARTBEAT_INTERVAL_MS as the processes got them. */
    kafkaSessionTimeoutMs: string;
    kafkaHeartbeatIntervalMs: string;
    origins: Record<string, string>;
  };
  load?: PacedLoadResult & { samplesPerSecond: number };
  /** Every probe over the whole run. */
  probes?: { alert: LatencySummary; stored: LatencySummary; timedOut: number };
  events: FailoverEvent[];
  /** Acknowledged samples (load and probes) against the rows stored once the lag drained. */
  storage?: { acknowledged: number; stored: number; drained: boolean };
  target: { description: string; met: boolean };
};

function seconds(ms: number | undefined): string {
  return ms === undefined ? 'never (window ended)' : `${(ms / 1000).toFixed(1)} s`;
}

function stallLine(label: string, stall: StallSummary): string {
  const partitions =
    stall.partitionsOver.length === 0 ? '' : ` on partitions ${stall.partitionsOver.join(',')}`;
  return (
    `    ${label.padEnd(24)} back under ${int(stall.thresholdMs)} ms after ${seconds(stall.stallMs)}` +
    ` · worst ${seconds(stall.worstMs)} · ${stall.probesOver} probes over${partitions}` +
    ` · baseline p99 ${int(stall.baselineP99Ms)} ms` +
    (stall.over.length === 0
      ? ''
      : `\n      over (partition, sent after the event, latency): ` +
        stall.over
          .slice(0, 8)
          .map((p) => `p${p.partition} +${seconds(p.sentAfterMs)} ${seconds(p.latencyMs)}`)
          .join(', '))
  );
}

/** The report as plain text for the terminal. */
export function formatFailoverReport(report: FailoverBenchReport): string {
  const { settings } = report;
  const lines = [
    `bench:failover ${report.date}`,
    formatMachine(report.machine),
    `${settings.partitions} partitions · two writers and two evaluators · ${int(settings.hosts)} hosts, ` +
      `${settings.payloadsPerRequest} per request, ${settings.requestsPerSecond} requests/s · ` +
      `session ${settings.kafkaSessionTimeoutMs} ms, heartbeat ${settings.kafkaHeartbeatIntervalMs} ms`,
  ];
  if (report.load !== undefined) {
    lines.push(
      `load: ${int(report.load.ok)} of ${int(report.load.sent)} requests answered 200, ` +
        `${int(report.load.samplesPerSecond)} samples/s, ${report.load.skipped} ticks skipped, ` +
        `failures ${JSON.stringify(report.load.failures)}`,
    );
  }
  if (report.probes !== undefined) {
    lines.push(
      `probes (a sample per partition every ${settings.stepIntervalMs} ms): alert p50/p99 ` +
        `${int(report.probes.alert.p50Ms)}/${int(report.probes.alert.p99Ms)} ms, queryable p50/p99 ` +
        `${int(report.probes.stored.p50Ms)}/${int(report.probes.stored.p99Ms)} ms, ` +
        `${report.probes.timedOut} timed out`,
    );
  }
  lines.push(
    '',
    'Events (stall: from the event until the last probe over the threshold was visible)',
  );
  for (const event of report.events) {
    lines.push(
      `  ${event.name} at ${event.atSeconds.toFixed(1)} s — ` +
        (event.met === undefined ? 'reported (no target)' : event.met ? 'met' : 'NOT met'),
      stallLine('sample → alert', event.alert),
      stallLine('acknowledged → queryable', event.stored),
    );
    for (const join of event.joins) {
      lines.push(
        `    ${join.process} joined ${join.groupId} at +${seconds(join.afterMs)} with partitions ${join.partitions.join(',')}`,
      );
    }
  }
  if (report.storage !== undefined) {
    lines.push(
      '',
      `storage: ${int(report.storage.acknowledged)} samples acknowledged, ${int(report.storage.stored)} stored` +
        (report.storage.drained ? '' : ' (the lag had not drained)'),
    );
  }
  lines.push('', `target: ${report.target.description}: ${report.target.met ? 'met' : 'NOT met'}`);
  lines.push(...formatNotes(report));
  return lines.join('\n');
}
