/**
 * `npm run bench:failover -- --scenario database` (issue 42, item 3): the database's primary
 * crashes under the usual load, in Kafka mode. A Patroni cluster (testkit: etcd, two TimescaleDB
 * nodes, synchronous_mode, ttl 10 s, loop_wait 2 s) serves a gateway, an api, a writer and an
 * evaluator given both hosts (`target_session_attrs=read-write`). After the baseline, the
 * leader's Patroni and its PostgreSQL postmaster get SIGKILL together (the machine is gone: no
 * shutdown checkpoint, no leader key released), and Patroni promotes the synchronous standby
 * once the key expires. It reports the time to the promotion, and the time from the kill until
 * the first sample acknowledged after it was queryable and the first alert fired after it was
 * listed, measured by the same probes as the role kills. Then it checks in the promoted
 * database: every acknowledged sample stored once (the probe hosts' samples one by one, the
 * load's by count), each probe alert fired once, and an alert whose one-minute window was
 * pending at the kill fired once, at the end of that window.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import {
  countDuplicateSamples,
  countFiredAlerts,
  listHostValues,
  listRuleAlerts,
  readMaxValue,
} from '@monitor/db/bench';
import { ingestPath } from '@monitor/schemas';
import { startPatroniCluster } from '@monitor/testkit';
import type { BenchProcess } from './bench-process.js';
import type { Cleanup } from './bench-run.js';
import { logProgress } from './bench-run.js';
import type { PartitionProbeResults } from './failover-probe.js';
import { failoverProbeTag, failoverSeqMetric, probePartition } from './failover-probe.js';
import {
  createProbeDeps,
  createProbeRules,
  createRule,
  probeHosts,
  waitForRules,
} from './failover-probe-http.js';
import type { DatabaseFailover, FailoverBenchReport } from './failover-report.js';
import type { ProbeLatency } from './failover-stall.js';
import { firstVisibleAfter, summarizeStall } from './failover-stall.js';
import { createFleet } from './fleet.js';
import { summarizeLatencies } from './latency-summary.js';
import { startPipelineStack } from './monitor-stack.js';
import { runPacedLoad } from './paced-load.js';
import { waitForLanded } from './wait-for-landed.js';

/** Issue 42: storage and alerting resume within 30 s of the kill. */
const targetResumeMs = 30_000;
const probeTimeoutMs = 60_000;
const warmUpMs = 10_000;
/** The pending-window rule's duration: the kill falls inside it (baseline + warm-up < 60 s). */
const windowMinutes = 1;

type Options = Omit<
  FailoverBenchReport['settings'],
  'partitions' | 'kafkaSessionTimeoutMs' | 'kafkaHeartbeatIntervalMs' | 'origins'
>;

export async function runDatabaseFailover(
  options: Options,
  report: FailoverBenchReport,
  cleanup: Cleanup,
  processes: BenchProcess[],
): Promise<void> {
  logProgress('starting a Patroni cluster (etcd, two TimescaleDB nodes)');
  const cluster = await startPatroniCluster({ timescale: true });
  cleanup.add('Patroni cluster', () => cluster.stop());
  const first = await cluster.leader();
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: 'bench_db_failover',
    database: {
      serverUrl: first.url,
      clientUrl: (url) => cluster.url.replace('/postgres?', `${new URL(url).pathname}?`),
    },
  });
  report.settings.origins = { ...stack.serviceOrigins, postgres: 'Patroni (testkit)' };
  report.settings.kafkaSessionTimeoutMs = stack.env['KAFKA_SESSION_TIMEOUT_MS'] ?? 'default';
  report.settings.kafkaHeartbeatIntervalMs = stack.env['KAFKA_HEARTBEAT_INTERVAL_MS'] ?? 'default';
  const partitions = Number(stack.env['SAMPLES_TOPIC_PARTITIONS'] ?? 6);
  report.settings.partitions = partitions;

  logProgress('starting gateway, api, a writer and an evaluator');
  // One after the other: the machine is shared, and four Node processes starting at once
  // may each miss the time allowed for its start.
  const role = async (name: string): Promise<BenchProcess> => {
    const proc = await stack.startRole(name);
    processes.push(proc);
    return proc;
  };
  const gateway = await role('gateway');
  const api = await role('api');
  await role('writer');
  const evaluator = await role('evaluator');
  const hosts = probeHosts(partitions);
  const ruleIds = await createProbeRules(api.baseUrl, headers, hosts);
  const windowHost = hosts[0] ?? '';
  // Holds from the first probe sample of its host on (the step number is never negative).
  const windowRuleId = await createRule(api.baseUrl, headers, {
    name: 'failover pending window',
    metric: failoverSeqMetric,
    condition: 'greater_than',
    threshold: -1,
    duration_minutes: windowMinutes,
    severity: 'info',
    scope: { [failoverProbeTag]: windowHost },
  });
  await waitForRules(evaluator.baseUrl, ruleIds.length + 1);

  const fleet = createFleet({ hostCount: options.hosts, baseTimeMs: Date.now() - 5 * 60_000 });
  const slots = 32;
  let stopping = false;
  const shouldStop = (): boolean => stopping;
  const loadStartedAt = performance.now();
  const load = runPacedLoad({
    url: new URL(ingestPath, gateway.baseUrl).toString(),
    headers,
    bodies: fleet.createBodySource({ payloadsPerRequest: options.payloadsPerRequest, slots }),
    slots,
    requestsPerSecond: options.requestsPerSecond,
    shouldStop,
  });
  const probeDeps = createProbeDeps(gateway.baseUrl, api.baseUrl, headers);
  const startEventTimeMs = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
  const probes = Promise.all(
    hosts.map((host, partition) =>
      probePartition(
        {
          partition,
          host,
          ruleId: ruleIds[partition] ?? '',
          startEventTimeMs,
          stepIntervalMs: options.stepIntervalMs,
          pollIntervalMs: options.pollIntervalMs,
          timeoutMs: probeTimeoutMs,
        },
        probeDeps,
        shouldStop,
      ),
    ),
  );

  logProgress(`warm-up ${warmUpMs / 1000} s, then a baseline of ${options.baselineSeconds} s`);
  await sleep(warmUpMs + options.baselineSeconds * 1000);

  const killed = await cluster.leader();
  logProgress(`SIGKILL to ${killed.name}'s Patroni and PostgreSQL postmaster`);
  const killAtMs = performance.now();
  await cluster.kill(killed);
  const promoted = await cluster.leader({ not: killed, timeoutMs: 120_000 });
  const promotionMs = performance.now() - killAtMs;
  logProgress(`${promoted.name} promoted after ${(promotionMs / 1000).toFixed(1)} s`);
  await sleep(
    Math.max(0, killAtMs + promotionMs + options.observeSeconds * 1000 - performance.now()),
  );
  // The window opened with the host's first sample: run until a step past its end is stored.
  if (!(await waitForSeq(stack.db, windowHost, windowMinutes * 60 + 1)))
    report.notes.push(`${windowHost} did not reach the end of the pending window within 4 minutes`);

  stopping = true;
  const [loadResult, probeResults] = await Promise.all([load, probes]);
  const loadSeconds = (performance.now() - loadStartedAt) / 1000;
  report.load = { ...loadResult, samplesPerSecond: loadResult.samplesAccepted / loadSeconds };
  const alertProbes = probeResults.flatMap((r) => r.alert);
  const storedProbes = probeResults.flatMap((r) => r.stored);
  // Even steps breach (the rule fires); odd ones clear it (the alert resolves).
  const firingProbes = probeResults.flatMap((r) => r.alert.filter((_, step) => step % 2 === 0));
  const latencies = (list: ProbeLatency[]): Float64Array =>
    Float64Array.from(list.flatMap((p) => (p.latencyMs === undefined ? [] : [p.latencyMs])));
  report.probes = {
    alert: summarizeLatencies(latencies(alertProbes)),
    stored: summarizeLatencies(latencies(storedProbes)),
    timedOut: [...alertProbes, ...storedProbes].filter((p) => p.latencyMs === undefined).length,
  };
  const window = {
    baselineFromMs: Math.max(loadStartedAt + warmUpMs, killAtMs - 15_000),
    eventAtMs: killAtMs,
    windowEndMs: performance.now(),
    timeoutMs: probeTimeoutMs,
  };

  logProgress('waiting for the writer to store every acknowledged sample');
  const probeSamples = probeResults.reduce((n, r) => n + 2 * r.stored.length, 0);
  const acknowledged = loadResult.samplesAccepted + probeSamples;
  const landed = await waitForLanded(stack.db, {
    expected: acknowledged,
    timeoutMs: 120_000,
    pollIntervalMs: 500,
    settleMs: 2_000,
  });
  const database: DatabaseFailover = {
    killed: killed.name,
    promoted: promoted.name,
    promotionMs,
    firstStoredMs: firstVisibleAfter(storedProbes, killAtMs),
    firstFiredMs: firstVisibleAfter(firingProbes, killAtMs),
    stall: {
      alert: summarizeStall(alertProbes, window),
      stored: summarizeStall(storedProbes, window),
    },
    samples: {
      acknowledged,
      stored: landed.stored,
      duplicates: await countDuplicateSamples(stack.db),
      probeHosts: await checkProbeSamples(stack.db, hosts, probeResults),
    },
    alerts: await checkProbeAlerts(stack.db, ruleIds, probeResults),
    pendingWindow: await checkWindowAlert(
      stack.db,
      windowRuleId,
      startEventTimeMs + windowMinutes * 60_000,
    ),
  };
  report.database = database;
  report.storage = { acknowledged, stored: landed.stored, drained: landed.drained };
  report.target.met =
    database.firstStoredMs !== undefined &&
    database.firstStoredMs <= targetResumeMs &&
    database.firstFiredMs !== undefined &&
    database.firstFiredMs <= targetResumeMs &&
    landed.stored === acknowledged &&
    database.samples.duplicates === 0 &&
    database.samples.probeHosts.missing === 0 &&
    database.samples.probeHosts.duplicates === 0 &&
    database.alerts.fired === database.alerts.expected &&
    database.alerts.duplicates === 0 &&
    database.pendingWindow.firedOnceOnTime;
}

/** Whether `host`'s stored step number reached `seq` within 4 minutes. */
async function waitForSeq(db: Database, host: string, seq: number): Promise<boolean> {
  const deadline = performance.now() + 240_000;
  while (performance.now() < deadline) {
    // A failed read (the server is being replaced) counts as not there yet.
    const stored = await readMaxValue(db, host, failoverSeqMetric).catch(() => null);
    if ((stored ?? -1) >= seq) return true;
    await sleep(500);
  }
  return false;
}

/** Each probe host's acknowledged steps, one by one: stored, and stored once. */
async function checkProbeSamples(
  db: Database,
  hosts: readonly string[],
  results: readonly PartitionProbeResults[],
): Promise<DatabaseFailover['samples']['probeHosts']> {
  const rows = await listHostValues(db, hosts, failoverSeqMetric);
  let acknowledged = 0;
  let missing = 0;
  let duplicates = 0;
  hosts.forEach((host, partition) => {
    const steps = results[partition]?.stored.length ?? 0;
    acknowledged += steps;
    const seen = new Map<number, number>();
    for (const row of rows)
      if (row.host === host) seen.set(row.value, (seen.get(row.value) ?? 0) + 1);
    for (let step = 0; step < steps; step++) {
      const count = seen.get(step) ?? 0;
      if (count === 0) missing += 1;
      if (count > 1) duplicates += count - 1;
    }
  });
  return { acknowledged, missing, duplicates };
}

/** Every breaching probe step fired one alert (one per fired_at), none twice. */
async function checkProbeAlerts(
  db: Database,
  ruleIds: readonly string[],
  results: readonly PartitionProbeResults[],
): Promise<DatabaseFailover['alerts']> {
  const expected = results.reduce((n, r) => n + Math.ceil(r.alert.length / 2), 0);
  const deadline = performance.now() + 60_000;
  for (;;) {
    const { fired, distinct } = await countFiredAlerts(db, ruleIds);
    if (fired >= expected || performance.now() > deadline)
      return { expected, fired, duplicates: fired - distinct };
    await sleep(500);
  }
}

/** The rule whose window was pending at the kill: one alert, fired as the window ended. */
async function checkWindowAlert(
  db: Database,
  ruleId: string,
  expectedFiredAtMs: number,
): Promise<DatabaseFailover['pendingWindow']> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const rows = await listRuleAlerts(db, ruleId);
    if (rows.length > 0 || performance.now() > deadline) {
      return {
        expectedFiredAt: new Date(expectedFiredAtMs).toISOString(),
        alerts: rows.map((row) => ({ status: row.status, firedAt: row.firedAt.toISOString() })),
        firedOnceOnTime:
          rows.length === 1 &&
          rows[0]?.status === 'active' &&
          rows[0].firedAt.getTime() === expectedFiredAtMs,
      };
    }
    await sleep(500);
  }
}
