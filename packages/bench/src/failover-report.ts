import type { ReportBase } from './harness/report.js';
import type { StallSummary } from './failover-stall.js';
import type { LatencySummary } from './latency-summary.js';
import type { PacedLoadResult } from './paced-load.js';
import { formatMachine, formatNotes, int } from './report-text.js';

/** A consumer's "joined consumer group" log line after an event. */
export type ObservedJoin = {
  process: string;
  groupId: string;
  /** A new one after the consumer lost its membership (its session expired). */
  memberId: string;
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

/** The database scenario: a Patroni leader's node killed, what it cost, what was kept. */
export type DatabaseFailover = {
  killed: string;
  promoted: string;
  /** From the kill until Patroni's REST API named the standby as the primary. */
  promotionMs: number;
  /** From the kill until the promoted node first committed a write (polled on it every 20 ms). */
  acceptedWritesMs: number | undefined;
  /** From then until the writer's first batch was stored there (its stored offsets moved). */
  storedAfterAcceptedMs: number | undefined;
  /**
   * Each consumer process's group membership through the outage: the member ids it joined with
   * before the kill, its joins after it (none: it kept its membership, no rebalance), and the
   * lines where kafkajs found its session gone ("The coordinator is not aware of this member").
   */
  membership: {
    process: string;
    membersBefore: string[];
    joinsAfter: ObservedJoin[];
    lostMemberLines: number;
  }[];
  /** From the kill until the first sample acknowledged after it was queryable. */
  firstStoredMs: number | undefined;
  /** From the kill until the first alert fired by a sample acknowledged after it was listed. */
  firstFiredMs: number | undefined;
  stall: { alert: StallSummary; stored: StallSummary };
  samples: {
    /** Samples the gateway acknowledged (load and probes), and rows stored once drained. */
    acknowledged: number;
    stored: number;
    /** Rows sharing a (series, time) with another row. */
    duplicates: number;
    /** The probe hosts' acknowledged steps, checked one by one. */
    probeHosts: { acknowledged: number; missing: number; duplicates: number };
  };
  /** The probe rules: one alert per breaching step expected. */
  alerts: { expected: number; fired: number; duplicates: number };
  /** A rule whose window was pending at the kill. */
  pendingWindow: {
    expectedFiredAt: string;
    alerts: { status: string; firedAt: string }[];
    firedOnceOnTime: boolean;
  };
};

/** The shard scenario: one shard's Patroni leader killed while the other shards carry on. */
export type ShardFailover = {
  shards: number;
  killedShard: string;
  killed: string;
  promoted: string;
  promotionMs: number;
  /** From the kill until the killed shard's first probe sample after it was readable (alert listed). */
  killedShardResumedMs: { stored: number | undefined; fired: number | undefined };
  /** The other shards' probes from the kill on. */
  othersStall: { alert: StallSummary; stored: StallSummary };
  /** Bus records the writer stored per second on each shard: before the kill, and while away. */
  records: { shard: string; baselinePerSecond: number; whileAwayPerSecond: number }[];
  /** A PromQL read each second while the shard was away, without and with `partial_response`. */
  reads: {
    strict: { status: number | 'no answer'; errorType?: string; warned: boolean }[];
    partial: { status: number | 'no answer'; errorType?: string; warned: boolean }[];
  };
  samples: DatabaseFailover['samples'] & {
    /** Probe hosts with samples on a shard other than their partition's. */
    misplacedProbeHosts: number;
  };
  alerts: DatabaseFailover['alerts'];
};

export type FailoverBenchReport = ReportBase & {
  settings: {
    /**
     * `roles`: consumer kills and joins; `database`: the database's primary killed; `shard`: one
     * sample shard's primary killed.
     */
    scenario: 'roles' | 'database' | 'shard';
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
  database?: DatabaseFailover;
  shard?: ShardFailover;
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
    `${settings.partitions} partitions · ` +
      (settings.scenario === 'database'
        ? 'a Patroni cluster (two TimescaleDB nodes, synchronous), one writer, one evaluator'
        : settings.scenario === 'shard'
          ? 'three sample shards (s1 a Patroni cluster of two TimescaleDB nodes), one writer, one evaluator'
          : 'two writers and two evaluators') +
      ` · ${int(settings.hosts)} hosts, ` +
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
  if (report.events.length > 0)
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
  if (report.database !== undefined) lines.push('', ...databaseLines(report.database));
  if (report.shard !== undefined) lines.push('', ...shardLines(report.shard));
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

function databaseLines(database: DatabaseFailover): string[] {
  const { samples, alerts, pendingWindow } = database;
  return [
    `SIGKILL to ${database.killed}'s Patroni and PostgreSQL: ${database.promoted} promoted after ${seconds(database.promotionMs)}`,
    `  it first committed a write after ${seconds(database.acceptedWritesMs)}; the writer's first batch was stored ` +
      (database.storedAfterAcceptedMs === undefined
        ? 'never (window ended)'
        : `${int(database.storedAfterAcceptedMs)} ms after that`),
    ...database.membership.map(
      (m) =>
        `  ${m.process}: member${m.membersBefore.length === 1 ? '' : 's'} ${m.membersBefore.join(', ')} before the kill; ` +
        (m.joinsAfter.length === 0
          ? 'no group join after it (no rebalance)'
          : `joined again ${m.joinsAfter.map((j) => `at +${seconds(j.afterMs)} as ${j.memberId}`).join(', ')}`) +
        `; ${m.lostMemberLines} "not aware of this member" lines`,
    ),
    `  first sample acknowledged after the kill queryable after ${seconds(database.firstStoredMs)}; ` +
      `first alert fired after the kill listed after ${seconds(database.firstFiredMs)}`,
    stallLine('sample → alert', database.stall.alert),
    stallLine('acknowledged → queryable', database.stall.stored),
    `  samples: ${int(samples.acknowledged)} acknowledged, ${int(samples.stored)} stored, ` +
      `${samples.duplicates} duplicated; probe hosts ${int(samples.probeHosts.acknowledged)} steps, ` +
      `${samples.probeHosts.missing} missing, ${samples.probeHosts.duplicates} twice`,
    `  probe alerts: ${alerts.fired} fired of ${alerts.expected} expected, ${alerts.duplicates} twice`,
    `  pending window (expected to fire at ${pendingWindow.expectedFiredAt}): ` +
      (pendingWindow.alerts.map((a) => `${a.status} fired ${a.firedAt}`).join(', ') || 'no alert') +
      (pendingWindow.firedOnceOnTime ? ' — once, on time' : ' — NOT once on time'),
  ];
}

function readCounts(reads: ShardFailover['reads']['strict']): string {
  const counts = new Map<string, number>();
  for (const read of reads) {
    const key =
      `${read.status}` +
      (read.errorType === undefined ? '' : ` ${read.errorType}`) +
      (read.warned ? ' with a warning' : '');
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${n} × ${key}`).join(', ') || 'none';
}

function shardLines(shard: ShardFailover): string[] {
  const { samples, alerts } = shard;
  return [
    `SIGKILL to ${shard.killedShard}'s leader ${shard.killed} (Patroni and PostgreSQL): ${shard.promoted} promoted after ${seconds(shard.promotionMs)}`,
    `  ${shard.killedShard}'s partitions: first sample acknowledged after the kill readable after ` +
      `${seconds(shard.killedShardResumedMs.stored)}, first alert listed after ${seconds(shard.killedShardResumedMs.fired)}`,
    "  the other shards' probes:",
    stallLine('sample → alert', shard.othersStall.alert),
    stallLine('acknowledged → readable', shard.othersStall.stored),
    `  bus records stored per second (before the kill → while ${shard.killedShard} was away): ` +
      shard.records
        .map((r) => `${r.shard} ${int(r.baselinePerSecond)} → ${int(r.whileAwayPerSecond)}`)
        .join(', '),
    `  PromQL while ${shard.killedShard} was away, a read a second: strict ${readCounts(shard.reads.strict)}; ` +
      `partial_response=true ${readCounts(shard.reads.partial)}`,
    `  samples: ${int(samples.acknowledged)} acknowledged, ${int(samples.stored)} stored over the shards, ` +
      `${samples.duplicates} duplicated; probe hosts ${int(samples.probeHosts.acknowledged)} steps, ` +
      `${samples.probeHosts.missing} missing, ${samples.probeHosts.duplicates} twice, ` +
      `${samples.misplacedProbeHosts} on a shard not their partition's`,
    `  probe alerts: ${alerts.fired} fired of ${alerts.expected} expected, ${alerts.duplicates} twice`,
  ];
}
