/**
 * `npm run bench:failover`: what a replica that goes away costs the alerts and the storage
 * (issue 28). Two writers and two evaluators over real Kafka under a steady load, with one probe
 * host per partition that sends a sample every second and measures, for each, sample → alert
 * visible (the evaluators) and acknowledged → queryable (the writers). Then, one after the other,
 * each followed by an observation window:
 *
 * 1. SIGKILL of a writer (a crash: the survivor waits for the session to expire);
 * 2. a new writer joins (what adding a replica costs: one rebalance; reported, no target);
 * 3. SIGKILL of an evaluator the moment a new evaluator has started (its first log line), so
 *    it joins while the group still waits for the dead member;
 * 4. SIGTERM of a writer and 5. of an evaluator (a goodbye: commit, leave, no session to wait).
 *
 * Per event it reports the stall: from the event until the last probe over max(1 s, twice the
 * p99 before the event) was visible, for both pipelines, and when each consumer joined with which
 * partitions (from their logs). The processes run with the defaults a user gets (the session and
 * heartbeat settings come from the environment only when set there). At the end it checks that
 * every acknowledged sample was stored.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { ingestPath } from '@monitor/schemas';
import type { BenchProcess } from './bench-process.js';
import type { Cleanup } from './bench-run.js';
import { integerOption, logProgress, runBenchCommand } from './bench-run.js';
import { runDatabaseFailover } from './failover-database.js';
import type { PartitionProbeResults } from './failover-probe.js';
import { probePartition } from './failover-probe.js';
import {
  createProbeDeps,
  createProbeRules,
  probeHosts,
  waitForRules,
} from './failover-probe-http.js';
import type { FailoverBenchReport, FailoverEvent, ObservedJoin } from './failover-report.js';
import { formatFailoverReport } from './failover-report.js';
import type { ProbeLatency } from './failover-stall.js';
import { summarizeStall } from './failover-stall.js';
import { createFleet } from './fleet.js';
import { summarizeLatencies } from './latency-summary.js';
import { startPipelineStack } from './monitor-stack.js';
import { runPacedLoad } from './paced-load.js';
import { countSamples } from '@monitor/db/bench';
import { waitForLanded } from './wait-for-landed.js';

/** The target: back under the threshold within 10 s of a replica going away. */
const targetStallMs = 10_000;
const probeTimeoutMs = 60_000;
const warmUpMs = 10_000;

type Options = Omit<
  FailoverBenchReport['settings'],
  'partitions' | 'kafkaSessionTimeoutMs' | 'kafkaHeartbeatIntervalMs' | 'origins'
>;

const usage = `Usage: npm run bench:failover -- [options]
  --scenario roles|database  roles (default): writers and evaluators killed, joining, leaving;
                           database: the Patroni leader's node killed (its own PostgreSQL)
  --hosts N                fleet hosts of the steady load (default 1000)
  --payloads-per-request N hosts per ingest request (default 50)
  --requests-per-second N  the load's pace (default 10)
  --baseline-seconds N     probing before the first event (default 20)
  --observe-seconds N      probing after each event (default 20)
  --step-interval-ms N     a probe sample per partition this often (default 1000)
  --poll-interval-ms N     how often a probe polls the API (default 100)
  --out FILE               JSON results (default bench-results/failover-<iso date>.json)
Services come from DATABASE_URL, KAFKA_BROKERS and REDIS_URL when set, else testkit starts them
(the database scenario always starts its own Patroni cluster).
KAFKA_SESSION_TIMEOUT_MS, KAFKA_HEARTBEAT_INTERVAL_MS, WRITER_*, EVALUATOR_* and
SAMPLES_TOPIC_PARTITIONS are passed on to the monitor processes; unset, they keep their defaults.`;

async function runBenchmark(
  options: Options,
  report: FailoverBenchReport,
  cleanup: Cleanup,
  processes: BenchProcess[],
): Promise<void> {
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: 'bench_failover',
  });
  report.settings.origins = stack.serviceOrigins;
  report.settings.kafkaSessionTimeoutMs = stack.env['KAFKA_SESSION_TIMEOUT_MS'] ?? 'default';
  report.settings.kafkaHeartbeatIntervalMs = stack.env['KAFKA_HEARTBEAT_INTERVAL_MS'] ?? 'default';
  const partitions = Number(stack.env['SAMPLES_TOPIC_PARTITIONS'] ?? 6);
  report.settings.partitions = partitions;
  const topic = stack.env['SAMPLES_TOPIC'] ?? '';

  // The consumers log their group joins (info), which the report reads back.
  const consumer = (role: 'writer' | 'evaluator', name: string): Promise<BenchProcess> =>
    stack.startRole(role, { name, extraEnv: { LOG_LEVEL: 'info' } }).then((proc) => {
      processes.push(proc);
      return proc;
    });
  logProgress('starting gateway, api, two writers and two evaluators');
  const [gateway, api] = await stack.startRoles(['gateway', 'api'], processes);
  const [writerA, writerB, evaluatorA, evaluatorB] = await Promise.all([
    consumer('writer', 'writer-a'),
    consumer('writer', 'writer-b'),
    consumer('evaluator', 'evaluator-a'),
    consumer('evaluator', 'evaluator-b'),
  ]);

  const hosts = probeHosts(partitions);
  const ruleIds = await createProbeRules(api.baseUrl, headers, hosts);
  await Promise.all(
    [evaluatorA, evaluatorB].map((proc) => waitForRules(proc.baseUrl, ruleIds.length)),
  );

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
  // Event time from an hour back, a second per step: hours of probing stay in the past.
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
  let probeAcknowledged = 0;
  const countProbeSamples = (results: PartitionProbeResults[]): void => {
    // Each step's sample carries two metrics, and each step records one alert latency.
    probeAcknowledged = results.reduce((n, r) => n + 2 * r.alert.length, 0);
  };

  logProgress(`warm-up ${warmUpMs / 1000} s, then a baseline of ${options.baselineSeconds} s`);
  await sleep(warmUpMs + options.baselineSeconds * 1000);

  type EventOptions = {
    /** What adding a replica costs: reported, no target of its own (issue 28 sets none). */
    informative?: boolean;
    /** The replica started to join during the stall: when it joined is reported. */
    joiner?: string;
    /** Runs before the event's time is taken (starting the joiner). */
    prepare?: () => Promise<void>;
  };
  type PendingEvent = EventOptions & {
    name: string;
    role: 'writer' | 'evaluator';
    atMs: number;
    atWallMs: number;
    watched: BenchProcess[];
  };
  const pending: PendingEvent[] = [];
  const observe = async (
    name: string,
    role: 'writer' | 'evaluator',
    watched: BenchProcess[],
    act: () => Promise<void>,
    eventOptions: EventOptions = {},
  ): Promise<void> => {
    await eventOptions.prepare?.();
    logProgress(name);
    const event = {
      name,
      role,
      atMs: performance.now(),
      atWallMs: Date.now(),
      watched,
      ...eventOptions,
    };
    pending.push(event);
    await act();
    await sleep(Math.max(0, event.atMs + options.observeSeconds * 1000 - performance.now()));
  };
  const kill = (proc: BenchProcess): Promise<void> => {
    if (proc.pid !== undefined) process.kill(proc.pid, 'SIGKILL');
    return Promise.resolve();
  };

  let writerC: BenchProcess | undefined;
  let evaluatorC: BenchProcess | undefined;
  let joiner: Promise<BenchProcess> | undefined;
  await observe('SIGKILL writer-a', 'writer', [writerB], () => kill(writerA));
  await observe(
    'writer-c joins',
    'writer',
    [writerB],
    async () => {
      writerC = await consumer('writer', 'writer-c');
    },
    { informative: true },
  );
  await observe(
    'SIGKILL evaluator-a as evaluator-c starts (it joins during the stall)',
    'evaluator',
    [evaluatorB],
    async () => {
      await kill(evaluatorA);
      evaluatorC = await joiner;
    },
    {
      joiner: 'evaluator-c',
      // The kill (the event) waits for the joiner's first log line (configuration read,
      // database open): its JoinGroup follows within about a second, inside the dead member's
      // session, however long the machine takes to start a process.
      prepare: async () => {
        joiner = consumer('evaluator', 'evaluator-c');
        await firstLogLine(report.logDir, 'evaluator-c');
      },
    },
  );
  await observe('SIGTERM writer-b', 'writer', [], () => writerB.stop());
  await observe('SIGTERM evaluator-b', 'evaluator', [], () => evaluatorB.stop());

  stopping = true;
  const [loadResult, probeResults] = await Promise.all([load, probes]);
  countProbeSamples(probeResults);
  const loadSeconds = (performance.now() - loadStartedAt) / 1000;
  report.load = { ...loadResult, samplesPerSecond: loadResult.samplesAccepted / loadSeconds };

  const alertProbes = probeResults.flatMap((r) => r.alert);
  const storedProbes = probeResults.flatMap((r) => r.stored);
  const latencies = (list: ProbeLatency[]): Float64Array =>
    Float64Array.from(list.flatMap((p) => (p.latencyMs === undefined ? [] : [p.latencyMs])));
  report.probes = {
    alert: summarizeLatencies(latencies(alertProbes)),
    stored: summarizeLatencies(latencies(storedProbes)),
    timedOut: [...alertProbes, ...storedProbes].filter((p) => p.latencyMs === undefined).length,
  };

  const consumers = [writerA, writerB, writerC, evaluatorA, evaluatorB, evaluatorC].filter(
    (proc): proc is BenchProcess => proc !== undefined,
  );
  report.events = pending.map((event, i): FailoverEvent => {
    const window = {
      baselineFromMs: Math.max(loadStartedAt + warmUpMs, event.atMs - 15_000),
      eventAtMs: event.atMs,
      windowEndMs: pending[i + 1]?.atMs ?? event.atMs + options.observeSeconds * 1000,
      timeoutMs: probeTimeoutMs,
    };
    const alert = summarizeStall(alertProbes, window);
    const stored = summarizeStall(storedProbes, window);
    const own = event.role === 'writer' ? stored : alert;
    const joins = consumers.flatMap((proc) =>
      joinsAfter(proc, topic, event.atWallMs, window.windowEndMs - event.atMs + event.atWallMs),
    );
    const joinerJoinedAfterMs =
      event.joiner === undefined
        ? undefined
        : joins.find((join) => join.process === event.joiner)?.afterMs;
    return {
      name: event.name,
      role: event.role,
      atSeconds: (event.atMs - loadStartedAt) / 1000,
      alert,
      stored,
      joins,
      ...(event.joiner === undefined ? {} : { joinerJoinedAfterMs }),
      met:
        event.informative === true
          ? undefined
          : own.stallMs !== undefined && own.stallMs <= targetStallMs,
    };
  });

  logProgress('waiting for the writers to store every acknowledged sample');
  const acknowledged = loadResult.samplesAccepted + probeAcknowledged;
  const landed = await waitForLanded(stack.db, {
    expected: acknowledged,
    timeoutMs: 120_000,
    pollIntervalMs: 500,
    settleMs: 2_000,
  });
  report.storage = { acknowledged, stored: landed.stored, drained: landed.drained };
  if (landed.stored !== acknowledged)
    report.notes.push(
      `stored ${landed.stored} samples of ${acknowledged} acknowledged (now ${await countSamples(stack.db)})`,
    );
  report.target.met =
    report.events.length === 5 &&
    report.events.every((event) => event.met !== false) &&
    landed.stored === acknowledged;
}

function scenarioOption(value: string): Options['scenario'] {
  if (value !== 'roles' && value !== 'database')
    throw new Error('--scenario must be roles or database');
  return value;
}

/** Resolves once the process named `name` wrote its first line to its log in `logDir`. */
async function firstLogLine(logDir: string, name: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    try {
      if (readFileSync(join(logDir, `${name}.log`), 'utf8').includes('\n')) return;
    } catch {
      // not created yet
    }
    await sleep(20);
  }
  throw new Error(`${name} logged nothing within 60 s`);
}

/** The "joined consumer group" lines a process logged between two wall-clock instants. */
function joinsAfter(
  proc: BenchProcess,
  topic: string,
  fromWallMs: number,
  toWallMs: number,
): ObservedJoin[] {
  let text: string;
  try {
    text = readFileSync(proc.logFile, 'utf8');
  } catch {
    return [];
  }
  const joins: ObservedJoin[] = [];
  for (const line of text.split('\n')) {
    if (!line.includes('joined consumer group')) continue;
    const entry = JSON.parse(line) as {
      time: string;
      groupId: string;
      assignment: Record<string, number[]>;
    };
    const atMs = Date.parse(entry.time);
    if (atMs < fromWallMs || atMs >= toWallMs) continue;
    joins.push({
      process: proc.name,
      groupId: entry.groupId,
      afterMs: atMs - fromWallMs,
      partitions: entry.assignment[topic] ?? [],
    });
  }
  return joins;
}

await runBenchCommand({
  name: 'failover',
  usage,
  defaults: {
    scenario: 'roles',
    hosts: '1000',
    'payloads-per-request': '50',
    'requests-per-second': '10',
    'baseline-seconds': '20',
    'observe-seconds': '20',
    'step-interval-ms': '1000',
    'poll-interval-ms': '100',
  },
  parseOptions: (values): Options => ({
    scenario: scenarioOption(values.scenario),
    hosts: integerOption('hosts', values.hosts),
    payloadsPerRequest: integerOption(
      'payloads-per-request',
      values['payloads-per-request'],
      1,
      700,
    ),
    requestsPerSecond: integerOption('requests-per-second', values['requests-per-second'], 1, 1000),
    baselineSeconds: integerOption('baseline-seconds', values['baseline-seconds'], 5),
    observeSeconds: integerOption('observe-seconds', values['observe-seconds'], 12),
    stepIntervalMs: integerOption('step-interval-ms', values['step-interval-ms'], 100),
    pollIntervalMs: integerOption('poll-interval-ms', values['poll-interval-ms'], 10),
  }),
  createReport: (options) => ({
    settings: {
      ...options,
      partitions: 0,
      kafkaSessionTimeoutMs: 'default',
      kafkaHeartbeatIntervalMs: 'default',
      origins: {},
    },
    events: [],
    target: {
      description:
        options.scenario === 'database'
          ? 'storage and alerting resume within 30 s of the kill; every acknowledged sample stored once; each alert fired once, the pending window included'
          : `every kill and leave (a join is reported only): its pipeline back under max(1 s, 2 × p99 before) within ${targetStallMs / 1000} s; every acknowledged sample stored`,
      met: false,
    },
  }),
  run: (options, report, cleanup, processes) =>
    (options.scenario === 'database' ? runDatabaseFailover : runBenchmark)(
      options,
      report,
      cleanup,
      processes,
    ),
  format: formatFailoverReport,
});
