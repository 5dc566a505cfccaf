/**
 * `npm run bench:alerts`: alert latency under the ingest benchmark's fleet load (issue text in
 * docs/benchmarks/alerts.md): from the 200 of the sample that completes a window to the alert being
 * visible in GET /api/v1/alerts.
 *
 * 1. PostgreSQL, Kafka and Redis from testkit (or the environment), a fresh database, then
 *    `monitor gateway`, `writer`, `evaluator` and `api` as separate processes.
 * 2. 1,000 rules through POST /api/v1/alerts/rules: all but a few on the fleet's metrics with
 *    thresholds the fleet never crosses (evaluated on every sample, never firing), four in ten
 *    of them with the rule options (see withRuleOptions), and one rule
 *    per probe host, scoped to it by a tag. Waits until the evaluator reports them loaded.
 * 3. The fleet sends single payloads at a fixed concurrency (warm-up, then the measured
 *    window); meanwhile each probe host repeatedly completes a window with event-time samples
 *    and polls the alerts API every ~20 ms, then clears the alert before its next probe.
 *
 * Steps: `start` the alerting pipeline (harness/alerting-pipeline.ts), `seed` the rules,
 * `measure` the probes under the fleet's load. `--scenario prometheus-rules` measures Prometheus
 * rule files instead (prometheus-rules-bench.ts), over the same pipeline.
 *
 * A command of its own rather than a phase of bench:ingest: that one saturates the machine on
 * purpose to find throughput ceilings and stops the pipeline for them, while latency needs the
 * evaluator and the api running under a steady load, with its own warm-up and rules.
 */
import { performance } from 'node:perf_hooks';
import type { Database } from '@monitor/db';
import {
  countAlertsOfOtherRules,
  countEvaluatorStates,
  readCommittedRecords,
} from '@monitor/db/bench';
import { ingestPath } from '@monitor/schemas';
import { probeUntil } from './alert-probe.js';
import { createAlertProbeDeps } from './alert-probe-http.js';
import {
  planFleetRules,
  planProbeRules,
  usesRuleOptions,
  withRuleOptions,
} from './alert-rule-plan.js';
import type { AlertsBenchReport } from './alerts-report.js';
import { formatAlertsReport } from './alerts-report.js';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import { createFleet } from './fleet.js';
import type { AlertingPipeline } from './harness/alerting-pipeline.js';
import { startAlertingPipeline } from './harness/alerting-pipeline.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { summarizeLatencies } from './latency-summary.js';
import { runLoad, summarizeLoad } from './load-client.js';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';
import { runPrometheusRulesBench } from './prometheus-rules-bench.js';
import { createRules, waitForRulesLoaded } from './rules-api.js';
import { sumOf } from './writer-metrics.js';

/**
 * The targets: p99 under 1 s with 1,000 rules active under the fleet's load; at fleet scale
 * (issue 28: 10,000 rules on 10,000 hosts) p99 under 500 ms and nothing left to evaluate.
 */
const targets = {
  default: { p99Ms: 1_000, rules: 1_000, hosts: 0 },
  fleetScale: { p99Ms: 500, rules: 10_000, hosts: 10_000 },
} as const;

function targetFor(options: { rules: number; hosts: number }) {
  const { fleetScale } = targets;
  return options.rules >= fleetScale.rules && options.hosts >= fleetScale.hosts
    ? fleetScale
    : targets.default;
}
const probeTimeoutMs = 30_000;
const ruleCreateConcurrency = 8;

/** The command line's options: what the report's settings record, less what follows from them. */
type Options = Omit<
  AlertsBenchReport['settings'],
  'fleetRules' | 'evaluatorRulePollMs' | 'origins'
>;

const usage = `Usage: npm run bench:alerts -- [options]
  --scenario NAME             json-rules (default: this one) or prometheus-rules (its own options:
                              npm run bench:alerts -- --scenario prometheus-rules --help)
  --rules N                   rules active, probe rules included (default 1000)
  --probe-hosts N             probe hosts, one rule each, probing in parallel (default 4)
  --probe-duration-minutes N  duration_minutes of the probe rules (default 1)
  --poll-interval-ms N        how often a probe lists the alerts (default 20)
  --hosts N                   simulated fleet hosts (default 2000)
  --concurrency N             fleet requests in flight, single payloads (default 64)
  --requests-per-second N     the fleet's pace, at most (default 0: as fast as answered)
  --warm-up-seconds N         fleet load before the probes start (default 5)
  --duration-seconds N        probing time under load (default 60)
  --out FILE                  JSON results (default bench-results/alerts-<iso date>.json)
Services come from DATABASE_URL, KAFKA_BROKERS and REDIS_URL when set, else testkit starts them.
EVALUATOR_*, WRITER_*, INGEST_PRODUCE_*, INGEST_PUBLISH_*, DATABASE_POOL_MAX and
SAMPLES_TOPIC_PARTITIONS are passed on to the monitor processes. BENCH_ALERTS_RULE_OPTIONS=off
creates the fleet rules without the rule options (recovery threshold, keep-firing-for, flapping…; a baseline).`;

type Context = BenchContext<Options, Omit<AlertsBenchReport, keyof ReportBase>>;

/**
 * The probe rules and the fleet's, through the API; resolves the probe rules' ids once the
 * evaluator has loaded them all.
 */
async function createRuleSet(
  { api, evaluator, headers }: AlertingPipeline,
  { options, report }: Context,
): Promise<string[]> {
  logProgress(`creating ${options.rules} rules`);
  const probeRuleIds = await createRules(
    api.baseUrl,
    headers,
    planProbeRules(probeHostsOf(options), options.probeDurationMinutes),
    ruleCreateConcurrency,
  );
  const planned = planFleetRules(options.rules - options.probeHosts);
  // BENCH_ALERTS_RULE_OPTIONS=off: the same rules without the rule options (a baseline).
  const fleetRules =
    process.env['BENCH_ALERTS_RULE_OPTIONS'] === 'off' ? planned : withRuleOptions(planned);
  report.notes.push(
    `rule options on ${fleetRules.filter(usesRuleOptions).length} of ${fleetRules.length} fleet rules: ` +
      'recovery_threshold + keep_firing_for_minutes, flapping, no_data_minutes (alerting), or all three',
  );
  await createRules(api.baseUrl, headers, fleetRules, ruleCreateConcurrency);
  const rulesCreatedAt = performance.now();
  await waitForRulesLoaded(evaluator.baseUrl, options.rules);
  report.rulesLoadedAfterMs = performance.now() - rulesCreatedAt;
  return probeRuleIds;
}

function probeHostsOf(options: Options): string[] {
  return Array.from({ length: options.probeHosts }, (_, i) => `bench-probe-${i}`);
}

/** The fleet's warm-up, then the probes under its load; the evaluator's figures after them. */
async function measure(
  { stack, headers, gateway, evaluator, api }: AlertingPipeline,
  { options, report, processes }: Context,
  probeRuleIds: string[],
): Promise<void> {
  const probeHosts = probeHostsOf(options);
  const fleet = createFleet({
    hostCount: options.hosts,
    baseTimeMs: Math.floor(Date.now() / 1000) * 1000 - 5 * 60_000,
  });
  const bodies = fleet.createBodySource({ payloadsPerRequest: 1, slots: options.concurrency });
  const ingest = { baseUrl: gateway.baseUrl, path: () => ingestPath, headers, bodies };
  const pace =
    options.requestsPerSecond > 0 ? { maxRequestsPerSecond: options.requestsPerSecond } : {};
  if (options.warmUpSeconds > 0) {
    logProgress(`fleet warm-up for ${options.warmUpSeconds} s`);
    const warmUp = await runLoad({
      ...ingest,
      concurrency: options.concurrency,
      durationMs: options.warmUpSeconds * 1000,
      ...pace,
    });
    if (warmUp.ok === 0)
      throw new Error(`the gateway acknowledged nothing: ${warmUp.examples.join('; ')}`);
  }

  logProgress(`probing for ${options.durationSeconds} s under the fleet's load`);
  const cpuBefore = cpuSnapshot(processes);
  const evaluationsBefore = await scrapeSum(evaluator.baseUrl, 'evaluator_evaluations_total');
  const windowStartedAt = performance.now();
  const deadline = performance.now() + options.durationSeconds * 1000;
  const probeDeps = createAlertProbeDeps(gateway.baseUrl, api.baseUrl, headers);
  const [load, outcomes] = await Promise.all([
    runLoad({
      ...ingest,
      concurrency: options.concurrency,
      durationMs: options.durationSeconds * 1000,
      ...pace,
    }),
    Promise.all(
      probeHosts.map((host, i) =>
        probeUntil(
          {
            host,
            ruleId: probeRuleIds[i] ?? '',
            durationMinutes: options.probeDurationMinutes,
            pollIntervalMs: options.pollIntervalMs,
            timeoutMs: probeTimeoutMs,
          },
          probeDeps,
          deadline,
          report.notes,
        ),
      ),
    ),
  ]);
  const cpu = cpuUsedBetween(cpuBefore, cpuSnapshot(processes));
  const evaluationsAfter = await scrapeSum(evaluator.baseUrl, 'evaluator_evaluations_total');
  const evaluations = evaluationsAfter - evaluationsBefore;
  report.evaluator = {
    evaluationsPerSecond: (evaluations * 1000) / (performance.now() - windowStartedAt),
    // What the capacity planner takes (packages/server/src/capacity/capacity-costs.json, evaluatorCpuUsPerSampleRule).
    cpuUsPerEvaluation:
      evaluations > 0 ? ((cpu.seconds['evaluator'] ?? 0) * 1e6) / evaluations : undefined,
    recordsBehindWriter: await recordsBehindWriter(stack.db, stack.env['SAMPLES_TOPIC'] ?? ''),
    statesStored: await countEvaluatorStates(stack.db),
  };

  report.fleet = { ...summarizeLoad(load), samplesPerSecond: load.samplesAccepted / load.seconds };
  for (const [name, seconds] of Object.entries(cpu.seconds))
    report.cpuSeconds[name === 'self' ? 'load generator + probes' : name] = seconds;
  report.machineBusyPercent = cpu.machineBusyPercent;

  const all = outcomes.flat().sort((a, b) => a.startedAtMs - b.startedAtMs);
  const fired = all.filter((o) => o.fireMs !== undefined);
  const fireMs = fired.map((o) => o.fireMs ?? 0);
  const half = Math.floor(fireMs.length / 2);
  report.probes = {
    count: fired.length,
    timedOut: all.length - fired.length,
    resolveTimedOut: fired.filter((o) => o.resolveMs === undefined).length,
    fire: summarizeLatencies(Float64Array.from(fireMs)),
    resolve: summarizeLatencies(
      Float64Array.from(all.flatMap((o) => (o.resolveMs === undefined ? [] : [o.resolveMs]))),
    ),
    fireP50FirstHalfMs: summarizeLatencies(Float64Array.from(fireMs.slice(0, half))).p50Ms,
    fireP50SecondHalfMs: summarizeLatencies(Float64Array.from(fireMs.slice(half))).p50Ms,
    investigation: summarizeLatencies(
      Float64Array.from(
        all.flatMap((o) => (o.investigationMs === undefined ? [] : [o.investigationMs])),
      ),
    ),
    investigationTimedOut: fired.filter((o) => o.investigationMs === undefined).length,
    meanPollsToFire:
      fired.length === 0 ? 0 : fired.reduce((sum, o) => sum + o.firePolls, 0) / fired.length,
  };
  const p99Ms = fired.length > 0 ? report.probes.fire.p99Ms : undefined;
  const target = targetFor(options);
  report.target = {
    ...report.target,
    p99Ms,
    met:
      p99Ms !== undefined &&
      p99Ms < target.p99Ms &&
      report.probes.timedOut === 0 &&
      options.rules >= target.rules &&
      (target === targets.default || report.evaluator.recordsBehindWriter === 0),
  };

  report.fleetRuleAlerts = await countAlertsOfOtherRules(stack.db, probeRuleIds);
  if (report.fleetRuleAlerts > 0)
    report.notes.push('fleet rules fired: their thresholds are not out of the fleet’s reach');
}

/**
 * How many more records of the topic the writer has stored than the evaluator has evaluated,
 * from the offsets both commit with their transactions (the lag gauge only moves after a batch,
 * so it says nothing while one batch takes long).
 */
async function recordsBehindWriter(db: Database, topic: string): Promise<number> {
  const records = await readCommittedRecords(db, topic);
  return (records.get('writer') ?? 0) - (records.get('evaluator') ?? 0);
}

/** The sum of a metric over its label sets on a role's /metrics (0 if it has none). */
async function scrapeSum(baseUrl: string, name: string): Promise<number> {
  const response = await fetch(new URL('/metrics', baseUrl));
  return sumOf(await response.text(), name);
}

/** `--scenario NAME` or `--scenario=NAME` of the command line; `json-rules` without one. */
function scenarioOf(argv: readonly string[]): string {
  const at = argv.findIndex((arg) => arg === '--scenario' || arg.startsWith('--scenario='));
  if (at === -1) return 'json-rules';
  const arg = argv[at] ?? '';
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : (argv[at + 1] ?? '');
}

if (scenarioOf(process.argv) === 'prometheus-rules') await runPrometheusRulesBench();

await runBench({
  name: 'alerts',
  usage,
  defaults: {
    scenario: 'json-rules',
    rules: '1000',
    'probe-hosts': '4',
    'probe-duration-minutes': '1',
    'poll-interval-ms': '20',
    hosts: '2000',
    concurrency: '64',
    'requests-per-second': '0',
    'warm-up-seconds': '5',
    'duration-seconds': '60',
  },
  parseOptions: (values): Options => {
    if (values.scenario !== 'json-rules')
      throw new Error('--scenario must be json-rules or prometheus-rules');
    const probeHosts = integerOption('probe-hosts', values['probe-hosts'], 1, 100);
    return {
      rules: integerOption('rules', values.rules, probeHosts),
      probeHosts,
      // Probes advance event time by their window: a day's rule would run out of history.
      probeDurationMinutes: integerOption(
        'probe-duration-minutes',
        values['probe-duration-minutes'],
        0,
        5,
      ),
      pollIntervalMs: integerOption('poll-interval-ms', values['poll-interval-ms']),
      hosts: integerOption('hosts', values.hosts),
      concurrency: integerOption('concurrency', values.concurrency),
      requestsPerSecond: integerOption('requests-per-second', values['requests-per-second'], 0),
      warmUpSeconds: integerOption('warm-up-seconds', values['warm-up-seconds'], 0),
      durationSeconds: integerOption('duration-seconds', values['duration-seconds']),
    };
  },
  createReport: ({ rules, ...options }) => ({
    settings: {
      rules,
      fleetRules: rules - options.probeHosts,
      ...options,
      evaluatorRulePollMs: process.env['EVALUATOR_RULE_POLL_MS'] ?? 'default',
      origins: {},
    },
    cpuSeconds: {},
    target: {
      description:
        targetFor({ rules, hosts: options.hosts }) === targets.fleetScale
          ? `p99 under ${targets.fleetScale.p99Ms} ms and 0 records left to evaluate, ` +
            `${targets.fleetScale.rules} rules on ${targets.fleetScale.hosts} hosts (issue 28)`
          : `p99 under ${targets.default.p99Ms} ms with ${targets.default.rules} rules active (issue)`,
      p99Ms: undefined,
      met: false,
    },
  }),
  start: (context) =>
    startAlertingPipeline(context, { databasePrefix: 'bench_alerts', investigator: true }),
  seed: createRuleSet,
  measure,
  format: formatAlertsReport,
});
