/**
 * `npm run bench:alerts`: alert latency under the ingest benchmark's fleet load (issue text in
 * docs/benchmarks.md): from the 200 of the sample that completes a window to the alert being
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
 * `--scenario prometheus-rules` measures Prometheus rule files instead (prometheus-rules-bench.ts).
 *
 * A command of its own rather than a phase of bench:ingest: that one saturates the machine on
 * purpose to find throughput ceilings and stops the pipeline for them, while latency needs the
 * evaluator and the api running under a steady load, with its own warm-up and rules.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import {
  countAlertsOfOtherRules,
  countEvaluatorStates,
  readCommittedRecords,
} from '@monitor/db/bench';
import { ingestPath } from '@monitor/schemas';
import type { ProbeAlert, ProbeDeps, ProbeOutcome, ProbeSpec } from './alert-probe.js';
import { probeSpanMs, runProbe } from './alert-probe.js';
import type { RuleBody } from './alert-rule-plan.js';
import { planFleetRules, planProbeRules } from './alert-rule-plan.js';
import type { AlertsBenchReport } from './alerts-report.js';
import { formatAlertsReport } from './alerts-report.js';
import type { BenchProcess } from './bench-process.js';
import type { Cleanup } from './bench-run.js';
import { integerOption, logProgress, runBenchCommand } from './bench-run.js';
import { createFleet } from './fleet.js';
import { summarizeLatencies } from './latency-summary.js';
import { runLoad, summarizeLoad } from './load-client.js';
import { startPipelineStack } from './monitor-stack.js';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';
import {
  createPrometheusRulesReport,
  parsePrometheusRulesOptions,
  prometheusRulesDefaults,
  prometheusRulesUsage,
  runPrometheusRulesBenchmark,
} from './prometheus-rules-bench.js';
import { formatPrometheusRulesReport } from './prometheus-rules-report.js';
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
const rulesLoadedTimeoutMs = 60_000;
const ruleCreateConcurrency = 8;
/** Probe samples start this far back in event time, so hours of probes never reach the future. */
const probeHistoryMs = 12 * 3_600_000;

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

async function runBenchmark(
  options: Options,
  report: AlertsBenchReport,
  cleanup: Cleanup,
  processes: BenchProcess[],
): Promise<void> {
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: 'bench_alerts',
  });
  report.settings.origins = stack.serviceOrigins;

  logProgress('starting gateway, writer, evaluator, api and investigator');
  const [gateway, , evaluator, api] = await stack.startRoles(
    ['gateway', 'writer', 'evaluator', 'api', 'investigator'],
    processes,
  );

  const probeHosts = Array.from({ length: options.probeHosts }, (_, i) => `bench-probe-${i}`);
  logProgress(`creating ${options.rules} rules`);
  const probeRuleIds = await createRules(
    api.baseUrl,
    headers,
    planProbeRules(probeHosts, options.probeDurationMinutes),
  );
  const planned = planFleetRules(options.rules - options.probeHosts);
  // BENCH_ALERTS_RULE_OPTIONS=off: the same rules without the rule options (a baseline).
  const fleetRules =
    process.env['BENCH_ALERTS_RULE_OPTIONS'] === 'off' ? planned : withRuleOptions(planned);
  report.notes.push(
    `rule options on ${fleetRules.filter(usesRuleOptions).length} of ${fleetRules.length} fleet rules: ` +
      'recovery_threshold + keep_firing_for_minutes, flapping, no_data_minutes (alerting), or all three',
  );
  await createRules(api.baseUrl, headers, fleetRules);
  const rulesCreatedAt = performance.now();
  await waitForRulesLoaded(evaluator.baseUrl, options.rules);
  report.rulesLoadedAfterMs = performance.now() - rulesCreatedAt;

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
  const probeDeps = createProbeDeps(gateway.baseUrl, api.baseUrl, headers);
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

/** A rule body with every rule option (docs/api.md#rule-options). */
type OptionsRuleBody = RuleBody & {
  recovery_threshold?: number;
  keep_firing_for_minutes?: number;
  flapping?: { window_minutes: number; max_transitions: number };
  no_data_minutes?: number;
  no_data_state?: 'alerting' | 'ok' | 'keep';
};

const ruleOptionFields = [
  'recovery_threshold',
  'keep_firing_for_minutes',
  'flapping',
  'no_data_minutes',
] as const;

function usesRuleOptions(rule: OptionsRuleBody): boolean {
  return ruleOptionFields.some((field) => rule[field] !== undefined);
}

/**
 * Turns the rule options on for four fleet rules in ten: hysteresis with keep-firing-for
 * (on the non-breaching side of the threshold, as the API insists; not on `equal`), flap
 * detection, no data (the fleet keeps sending, so it watches and never fires: the cost is the
 * last-seen bookkeeping and the sweeps), and one in ten with all of them.
 */
function withRuleOptions(rules: readonly RuleBody[]): OptionsRuleBody[] {
  return rules.map((rule, i): OptionsRuleBody => {
    const kind = i % 10;
    const hysteresis: Partial<OptionsRuleBody> =
      rule.condition === 'equal' || rule.condition === 'not_equal'
        ? {}
        : {
            recovery_threshold: rule.condition.startsWith('greater')
              ? rule.threshold - 5
              : rule.threshold + 5,
            keep_firing_for_minutes: 5,
          };
    const flapping = { flapping: { window_minutes: 10, max_transitions: 3 } };
    const noData = { no_data_minutes: 10, no_data_state: 'alerting' as const };
    if (kind === 0) return { ...rule, ...hysteresis };
    if (kind === 1) return { ...rule, ...flapping };
    if (kind === 2) return { ...rule, ...noData };
    if (kind === 3) return { ...rule, ...hysteresis, ...flapping, ...noData };
    return rule;
  });
}

/** Creates the rules through the API; returns their ids in order. */
async function createRules(
  apiBaseUrl: string,
  headers: Record<string, string>,
  rules: readonly RuleBody[],
): Promise<string[]> {
  const ids: string[] = new Array<string>(rules.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < rules.length; i = next++) {
      const response = await fetch(new URL('/api/v1/alerts/rules', apiBaseUrl), {
        method: 'POST',
        headers,
        body: JSON.stringify(rules[i]),
      });
      const text = await response.text();
      if (response.status !== 201)
        throw new Error(
          `POST /api/v1/alerts/rules answered ${response.status}: ${text.slice(0, 300)}`,
        );
      ids[i] = (JSON.parse(text) as { id: string }).id;
    }
  };
  await Promise.all(Array.from({ length: ruleCreateConcurrency }, () => worker()));
  return ids;
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

/** Polls the evaluator's `evaluator_rules` gauge until it shows `count` rules. */
async function waitForRulesLoaded(evaluatorBaseUrl: string, count: number): Promise<void> {
  const deadline = performance.now() + rulesLoadedTimeoutMs;
  let seen = 'nothing';
  while (performance.now() < deadline) {
    const response = await fetch(new URL('/metrics', evaluatorBaseUrl));
    const text = await response.text();
    const exposed = /^evaluator_rules[ {]/m.test(text);
    const loaded = sumOf(text, 'evaluator_rules');
    if (exposed && loaded >= count) return;
    seen = exposed
      ? `evaluator_rules ${loaded}`
      : `${response.status}, no evaluator_rules in: ${text.slice(0, 200)}`;
    await sleep(100);
  }
  throw new Error(
    `the evaluator did not load ${count} rules within ${rulesLoadedTimeoutMs} ms (last seen: ${seen})`,
  );
}

type TimedOutcome = ProbeOutcome & { startedAtMs: number };

/** Runs probes back to back until `deadline`, each starting where the last one's window ended. */
async function probeUntil(
  spec: ProbeSpec,
  deps: ProbeDeps,
  deadline: number,
  notes: string[],
): Promise<TimedOutcome[]> {
  const outcomes: TimedOutcome[] = [];
  let eventTimeMs = Math.floor(Date.now() / 1000) * 1000 - probeHistoryMs;
  while (performance.now() < deadline) {
    if (eventTimeMs + probeSpanMs(spec.durationMinutes) > Date.now() - 60_000) {
      notes.push(`${spec.host} ran out of event-time history; fewer probes than time allowed`);
      break;
    }
    const startedAtMs = performance.now();
    outcomes.push({ ...(await runProbe(spec, eventTimeMs, deps)), startedAtMs });
    eventTimeMs += probeSpanMs(spec.durationMinutes);
  }
  return outcomes;
}

function createProbeDeps(
  gatewayBaseUrl: string,
  apiBaseUrl: string,
  headers: Record<string, string>,
): ProbeDeps {
  return {
    async ingest(sample) {
      const response = await fetch(new URL(ingestPath, gatewayBaseUrl), {
        method: 'POST',
        headers,
        body: JSON.stringify(sample),
      });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(`probe ingest answered ${response.status}: ${text.slice(0, 300)}`);
    },
    async listAlerts(ruleId) {
      const url = new URL('/api/v1/alerts', apiBaseUrl);
      url.search = new URLSearchParams({ rule_id: ruleId, status: 'all', limit: '5' }).toString();
      const response = await fetch(url, { headers });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(`GET /api/v1/alerts answered ${response.status}: ${text.slice(0, 300)}`);
      return (JSON.parse(text) as { alerts: ProbeAlert[] }).alerts;
    },
    async investigationStatus(id) {
      const response = await fetch(new URL(`/api/v1/investigations/${id}`, apiBaseUrl), {
        headers,
      });
      const text = await response.text();
      if (response.status !== 200)
        throw new Error(
          `GET /api/v1/investigations/:id answered ${response.status}: ${text.slice(0, 300)}`,
        );
      return (JSON.parse(text) as { status: string }).status;
    },
    now: () => performance.now(),
    sleep,
  };
}

/** `--scenario NAME` or `--scenario=NAME` of the command line; `json-rules` without one. */
function scenarioOf(argv: readonly string[]): string {
  const at = argv.findIndex((arg) => arg === '--scenario' || arg.startsWith('--scenario='));
  if (at === -1) return 'json-rules';
  const arg = argv[at] ?? '';
  return arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : (argv[at + 1] ?? '');
}

if (scenarioOf(process.argv) === 'prometheus-rules') {
  await runBenchCommand({
    name: 'alerts-prometheus-rules',
    usage: prometheusRulesUsage,
    defaults: prometheusRulesDefaults,
    parseOptions: parsePrometheusRulesOptions,
    createReport: createPrometheusRulesReport,
    run: runPrometheusRulesBenchmark,
    format: formatPrometheusRulesReport,
  });
}

await runBenchCommand({
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
  run: runBenchmark,
  format: formatAlertsReport,
});
