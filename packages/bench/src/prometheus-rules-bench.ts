/**
 * `npm run bench:alerts -- --scenario prometheus-rules`: Prometheus alerting rules at fleet scale
 * (issue 41: 1,000 rules over 10,000 hosts, evaluated every 15 s). PostgreSQL, Kafka and Redis as
 * for the other scenario, then `monitor gateway`, `writer`, `evaluator` and `api` as separate
 * processes; the fleet remote-writes as Prometheus would (`prometheus-fleet.ts`), first some
 * history, then every interval; the rule groups (`prometheus-rule-plan.ts`) go in through the
 * ruler API. Over the measured window: whether every group was evaluated at every slot and how
 * late (the evaluator's `rule_group_evaluation_lag_seconds`), how long evaluations took, the
 * evaluator's CPU per rule evaluation, and, from probe hosts, the time from a breaching sample's
 * 204 to its alert listed by GET /api/v1/alerts (which includes the wait for the next slot).
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { integerOption } from './harness/command-line.js';
import { logProgress } from './harness/progress.js';
import type { ReportBase } from './harness/report.js';
import type { AlertingPipeline } from './harness/alerting-pipeline.js';
import { startAlertingPipeline } from './harness/alerting-pipeline.js';
import type { BenchContext } from './harness/run-bench.js';
import { runBench } from './harness/run-bench.js';
import { summarizeLatencies } from './latency-summary.js';
import type { MetricsHistogram } from './metrics-histogram.js';
import { histogramOf, histogramSince, summarizeHistogram } from './metrics-histogram.js';
import { countAlertsNotNamed } from '@monitor/db/bench';
import { cpuSnapshot, cpuUsedBetween } from './proc-stats.js';
import { createPrometheusFleet } from './prometheus-fleet.js';
import type { Endpoint } from './prometheus-fleet-load.js';
import { remoteWrite, startScraping, writeHistory } from './prometheus-fleet-load.js';
import {
  planPrometheusRuleGroups,
  probeAlertName,
  probeBreachValue,
  probeClearValue,
} from './prometheus-rule-plan.js';
import type { PrometheusRulesBenchReport } from './prometheus-rules-report.js';
import { formatPrometheusRulesReport } from './prometheus-rules-report.js';
import { encodeRemoteWrite } from './remote-write-load.js';
import { sumOf } from './writer-metrics.js';

const hostsPerService = 100;
const rulesPerFleetWideGroup = 10;
const probePollMs = 100;

type Options = Omit<PrometheusRulesBenchReport['settings'], 'groups' | 'services' | 'origins'>;

const usage = `Usage: npm run bench:alerts -- --scenario prometheus-rules [options]
  --rules N                   alerting rules, the probe rule included (default 1000)
  --fleet-wide-rules N        of which over the whole fleet (default 10); the others one service's
  --hosts N                   fleet hosts, ${hostsPerService} per service (default 10000)
  --interval-seconds N        the groups' interval and the fleet's scrape interval (default 15)
  --history-minutes N         history written before the rules start (default 10)
  --probe-hosts N             probe hosts (default 4)
  --warm-up-seconds N         after every group was evaluated once (default 30)
  --duration-seconds N        measured window (default 300)
  --out FILE                  JSON results (default bench-results/alerts-prometheus-rules-<iso date>.json)
Services come from DATABASE_URL, KAFKA_BROKERS and REDIS_URL when set, else testkit starts them.`;

const defaults = {
  scenario: 'prometheus-rules',
  rules: '1000',
  'fleet-wide-rules': '10',
  hosts: '10000',
  'interval-seconds': '15',
  'history-minutes': '10',
  'probe-hosts': '4',
  'warm-up-seconds': '30',
  'duration-seconds': '300',
};

function parseOptions(values: Record<keyof typeof defaults, string>): Options {
  const rules = integerOption('rules', values.rules, 2);
  return {
    scenario: 'prometheus-rules',
    rules,
    fleetWideRules: integerOption('fleet-wide-rules', values['fleet-wide-rules'], 0, rules - 1),
    hosts: integerOption('hosts', values.hosts, hostsPerService),
    intervalSeconds: integerOption('interval-seconds', values['interval-seconds'], 1, 600),
    historyMinutes: integerOption('history-minutes', values['history-minutes'], 0, 60),
    probeHosts: integerOption('probe-hosts', values['probe-hosts'], 1, 100),
    warmUpSeconds: integerOption('warm-up-seconds', values['warm-up-seconds'], 0),
    durationSeconds: integerOption('duration-seconds', values['duration-seconds']),
  };
}

function createReport(options: Options): Omit<PrometheusRulesBenchReport, keyof ReportBase> {
  return {
    settings: {
      ...options,
      groups: 0,
      services: Math.ceil(options.hosts / hostsPerService),
      origins: {},
    },
    cpuSeconds: {},
    target: {
      description:
        'every group evaluated at every slot of the window, none starting an interval late',
      met: false,
    },
  };
}

type ListedAlert = { id: string; status: string; labels: Record<string, string> };

/**
 * One probe host's cycles until `deadline`: a breaching sample, polls until its alert is listed
 * active, a clearing sample, polls until it is listed resolved; each cycle starts at a random
 * point of the interval, so the waits for the next slot are sampled evenly.
 */
async function probeUntil(
  host: string,
  write: Endpoint,
  api: Endpoint,
  intervalMs: number,
  deadline: number,
): Promise<{ fireMs: number[]; resolveMs: number[]; timedOut: number }> {
  const result = { fireMs: [] as number[], resolveMs: [] as number[], timedOut: 0 };
  const timeoutMs = 3 * intervalMs + 10_000;
  const instance = `${host}:9100`;
  const sample = (value: number) =>
    encodeRemoteWrite([
      {
        labels: [
          { name: '__name__', value: 'probe_value' },
          { name: 'instance', value: instance },
          { name: 'job', value: 'probe' },
        ],
        samples: [{ value, timestamp: Date.now() }],
      },
    ]);
  const listed = async (): Promise<ListedAlert[]> => {
    const url = new URL('/api/v1/alerts', api.baseUrl);
    url.search = new URLSearchParams({ status: 'all', limit: '100' }).toString();
    const response = await fetch(url, { headers: api.headers });
    const body = (await response.json()) as { alerts: ListedAlert[] };
    return body.alerts.filter(
      (a) => a.labels['alertname'] === probeAlertName && a.labels['instance'] === instance,
    );
  };
  /** Polls until `found` picks an alert; how long that took, or undefined after the timeout. */
  const until = async (found: (alerts: ListedAlert[]) => ListedAlert | undefined) => {
    const sentAt = performance.now();
    while (performance.now() - sentAt < timeoutMs) {
      const alert = found(await listed());
      if (alert !== undefined) return { alert, ms: performance.now() - sentAt };
      await sleep(probePollMs);
    }
    return undefined;
  };
  const seen = new Set((await listed()).map((a) => a.id));
  while (performance.now() + timeoutMs < deadline) {
    await sleep(Math.random() * intervalMs);
    if (!(await remoteWrite(write, sample(probeBreachValue)))) throw new Error('probe refused');
    const fired = await until((alerts) =>
      alerts.find((a) => a.status === 'active' && !seen.has(a.id)),
    );
    if (fired === undefined) {
      result.timedOut++;
      break;
    }
    seen.add(fired.alert.id);
    result.fireMs.push(fired.ms);
    if (!(await remoteWrite(write, sample(probeClearValue)))) throw new Error('probe refused');
    const resolved = await until((alerts) =>
      alerts.find((a) => a.id === fired.alert.id && a.status === 'resolved'),
    );
    if (resolved === undefined) {
      result.timedOut++;
      break;
    }
    result.resolveMs.push(resolved.ms);
  }
  return result;
}

/** The evaluator's counters and histograms the report takes. */
async function scrapeEvaluator(baseUrl: string) {
  const text = await (await fetch(new URL('/metrics', baseUrl))).text();
  return {
    evaluations: sumOf(text, 'rule_group_evaluations_total'),
    ruleEvaluations: sumOf(text, 'rule_group_rule_evaluations_total'),
    failedRules: sumOf(text, 'rule_group_rule_failures_total'),
    lag: histogramOf(text, 'rule_group_evaluation_lag_seconds'),
    duration: histogramOf(text, 'rule_group_evaluation_duration_seconds'),
  };
}

type GroupStatus = { name: string; lastEvaluation: string };
type Context = BenchContext<Options, Omit<PrometheusRulesBenchReport, keyof ReportBase>>;
/** What the measurement runs over: the fleet scraping on, and the rule groups loaded. */
type Seeded = { scraping: ReturnType<typeof startScraping>; groups: number };

/** The pipeline's gateway and api, each with the run's API key. */
function endpointsOf({ gateway, api, headers }: AlertingPipeline): {
  write: Endpoint;
  read: Endpoint;
} {
  const key = { 'x-api-key': headers['x-api-key'] ?? '' };
  return {
    write: { baseUrl: gateway.baseUrl, headers: key },
    read: { baseUrl: api.baseUrl, headers: key },
  };
}

/**
 * The fleet's history, then its scrapes every interval from now on, then the rule groups
 * through the ruler API; resolves once every group was evaluated once (or ten intervals passed).
 */
async function seed(
  pipeline: AlertingPipeline,
  { options, report, cleanup }: Context,
): Promise<Seeded> {
  const intervalMs = options.intervalSeconds * 1000;
  const { write, read } = endpointsOf(pipeline);
  const fleet = createPrometheusFleet({ hosts: options.hosts, services: report.settings.services });

  logProgress(`writing ${options.historyMinutes} min of history of ${options.hosts} hosts`);
  await writeHistory(write, fleet, intervalMs, options.historyMinutes, Date.now());
  const scraping = startScraping(write, fleet, intervalMs);
  cleanup.add('fleet scrapes', async () => void (await scraping.stop()));

  const groups = planPrometheusRuleGroups({
    rules: options.rules,
    fleetWideRules: options.fleetWideRules,
    services: report.settings.services,
    rulesPerFleetWideGroup,
    intervalSeconds: options.intervalSeconds,
  });
  report.settings.groups = groups.length;
  logProgress(`loading ${options.rules} rules in ${groups.length} groups`);
  for (const group of groups) {
    const response = await fetch(new URL('/prometheus/config/v1/rules/bench', read.baseUrl), {
      method: 'POST',
      headers: { ...read.headers, 'content-type': 'application/yaml' },
      body: group.yaml,
    });
    if (response.status !== 202)
      throw new Error(`the ruler API answered ${response.status}: ${await response.text()}`);
  }
  const loadedAt = performance.now();
  for (;;) {
    const response = await fetch(new URL('/prometheus/api/v1/rules', read.baseUrl), {
      headers: read.headers,
    });
    const { data } = (await response.json()) as { data: { groups: GroupStatus[] } };
    const never =
      groups.length - data.groups.filter((g) => !g.lastEvaluation.startsWith('0001')).length;
    if (never === 0) {
      report.rulesEvaluatedAfterMs = performance.now() - loadedAt;
      break;
    }
    if (performance.now() - loadedAt > 10 * intervalMs + 60_000) {
      // Measured all the same: how far behind the evaluator is is the figure asked for.
      report.notes.push(
        `${never} of ${groups.length} groups not evaluated once within 10 intervals of loading`,
      );
      break;
    }
    await sleep(500);
  }
  return { scraping, groups: groups.length };
}

/** The warm-up, then the measured window: the evaluator's figures and the probes' latencies. */
async function measure(
  pipeline: AlertingPipeline,
  { options, report, processes }: Context,
  { scraping, groups }: Seeded,
): Promise<void> {
  const intervalMs = options.intervalSeconds * 1000;
  const { write, read } = endpointsOf(pipeline);
  logProgress(`groups evaluated once; warm-up for ${options.warmUpSeconds} s`);
  await sleep(options.warmUpSeconds * 1000);

  logProgress(`measuring for ${options.durationSeconds} s`);
  scraping.reset();
  const before = await scrapeEvaluator(pipeline.evaluator.baseUrl);
  const cpuBefore = cpuSnapshot(processes);
  const startedAt = performance.now();
  const deadline = startedAt + options.durationSeconds * 1000;
  const probes = await Promise.all(
    Array.from({ length: options.probeHosts }, (_, i) =>
      probeUntil(`bench-probe-${i}`, write, read, intervalMs, deadline),
    ),
  );
  await sleep(Math.max(0, deadline - performance.now()));
  const windowSeconds = (performance.now() - startedAt) / 1000;
  const cpu = cpuUsedBetween(cpuBefore, cpuSnapshot(processes));
  const after = await scrapeEvaluator(pipeline.evaluator.baseUrl);
  const sent = await scraping.stop();

  const since = (key: 'lag' | 'duration'): MetricsHistogram =>
    histogramSince(after[key], before[key]);
  const lag = summarizeHistogram(since('lag'));
  const ruleEvaluations = after.ruleEvaluations - before.ruleEvaluations;
  report.evaluations = {
    expected: Math.floor(groups * (windowSeconds / options.intervalSeconds)),
    done: after.evaluations - before.evaluations,
    ruleEvaluations,
    failedRules: after.failedRules - before.failedRules,
    lag,
    duration: summarizeHistogram(since('duration')),
  };
  const evaluatorCpu = cpu.seconds['evaluator'] ?? 0;
  report.evaluator = {
    cpuSeconds: evaluatorCpu,
    cpuUsPerRuleEvaluation:
      ruleEvaluations > 0 ? (evaluatorCpu * 1e6) / ruleEvaluations : undefined,
  };
  report.fleet = {
    requests: sent.requests,
    failed: sent.failed,
    samplesPerSecond: sent.samples / sent.seconds,
  };
  report.probes = {
    fire: summarizeLatencies(Float64Array.from(probes.flatMap((p) => p.fireMs))),
    resolve: summarizeLatencies(Float64Array.from(probes.flatMap((p) => p.resolveMs))),
    timedOut: probes.reduce((n, p) => n + p.timedOut, 0),
  };
  for (const [name, seconds] of Object.entries(cpu.seconds))
    report.cpuSeconds[name === 'self' ? 'load generator + probes' : name] = seconds;
  report.machineBusyPercent = cpu.machineBusyPercent;
  report.fleetRuleAlerts = await countAlertsNotNamed(pipeline.stack.db, probeAlertName);
  // A slot at each window edge may fall either side: one evaluation per group of slack.
  report.target.met =
    report.evaluations.done >= report.evaluations.expected - groups &&
    lag.maxAtMost < options.intervalSeconds &&
    report.evaluations.failedRules === 0;
}

/** Runs the scenario and exits, as `runBench` does. */
export function runPrometheusRulesBench(): Promise<never> {
  return runBench({
    name: 'alerts-prometheus-rules',
    usage,
    defaults,
    parseOptions,
    createReport,
    start: (context) =>
      startAlertingPipeline(context, {
        databasePrefix: 'bench_prometheus_rules',
        investigator: false,
      }),
    seed,
    measure,
    format: formatPrometheusRulesReport,
  });
}
