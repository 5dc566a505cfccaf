// @services postgres
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import type { AgentProcess, HttpReceiver, TestDatabase } from '@monitor/testkit';
import {
  createSeededRandom,
  createTestDatabase,
  receiverNetwork,
  startHttpReceiver,
  startPrometheus,
} from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { encode } from './testing/prometheus-fixture.js';
import type { SeriesData } from './testing/prometheus-fixture.js';
import type { NativeHistogram } from '@monitor/schemas';
import type { ApiAlert, Matrix } from './testing/rule-oracle-comparison.js';
import {
  differences,
  epochMs,
  labelsKey,
  lifecycles,
  same,
  storedDifferences,
  within,
} from './testing/rule-oracle-comparison.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';

/**
 * Rule files against Prometheus 2.42: the same rule file in both, the same samples remote-written
 * to both as they happen (labelled as a stock Prometheus labels what it scrapes, timestamps a
 * little before each tick, as scrapes land), and each sending its alerts to an Alertmanager
 * stand-in. What each sent, its alerts API at two moments, and its ALERTS and recorded series
 * must agree: labels, annotations, states and values equal, times within one evaluation
 * interval. Native histograms too: an alert on the 99th percentile of a latency histogram's
 * rate, and a recorded sum of gauge histograms. The groups run on slots of their own on each
 * side (offset by a hash of the group), so the temperatures change between both sides' slots, at
 * least a second from either.
 */
const intervalMs = 4_000;
const phaseMs = 4 * intervalMs;
const tickMs = 1_000;
const ruleFile = `groups:
  - name: temperatures
    interval: 4s
    rules:
      - record: job:temp_celsius:max
        expr: max by (job) (temp_celsius)
        labels:
          source: rules
      - record: job:temp_celsius:avg
        expr: avg without (instance) (temp_celsius)
      - alert: HostHot
        expr: temp_celsius > 50
        for: 8s
        labels:
          severity: critical
          team: '{{ $labels.job }}-team'
        annotations:
          summary: '{{ $labels.instance }} is at {{ $value }} °C'
          description: '{{ $value | humanize }} on {{ $labels.instance | stripPort }} ({{ printf "%.1f" $value }})'
      - alert: JobHot
        expr: job:temp_celsius:max > 70
        keep_firing_for: 8s
        annotations:
          summary: 'hottest of {{ $labels.job }}: {{ $value }}'
      - alert: HostCold
        expr: temp_celsius < 35
        for: 1m
        labels:
          severity: info
      - record: job:queue_wait_seconds:sum
        expr: sum by (job) (queue_wait_seconds)
      - alert: SlowRequests
        expr: histogram_quantile(0.99, rate(request_duration_seconds[6s])) > 0.5
        annotations:
          summary: '{{ $labels.instance }} answers slowly'
`;

const hosts = [
  { instance: 'web-1:9100', job: 'node' },
  { instance: 'web-2:9100', job: 'node' },
  { instance: 'db-1:9100', job: 'db' },
];
/**
 * Each host's temperature per phase (phase 0 until the scenario starts, then `phaseMs` each);
 * null: the series ended (a staleness marker at the phase's first tick).
 */
const phases: (number | null)[][] = [
  [40, 45, 40],
  [61.25, 45, 30],
  [61.25, 82.5, 30],
  [40, 82.5, 30],
  [40, 45, null],
];

/**
 * Whether each host answers slowly in each phase: a fifth of its requests take a second. web-1
 * through phases 1 and 2: the alerts API is read 6.5 s into phase 2 (SlowRequests firing, its
 * 6 s window all slow) and 12 s into phase 3 (resolved: 6 s of window and a 4 s interval later).
 */
const slowPhases: boolean[][] = [
  [false, false, false],
  [true, false, false],
  [true, false, false],
  [false, false, false],
  [false, false, false],
];

/**
 * A native histogram of schema 0 (buckets (2^(i-1), 2^i]) with `fast` observations of 50 ms and
 * `slow` of 1 s, as the Go client library would expose a latency counter.
 */
function latencies(fast: number, slow: number): NativeHistogram {
  return {
    integer: true,
    schema: 0,
    zeroThreshold: 2.938735877055719e-39,
    zeroCount: 0,
    count: fast + slow,
    sum: fast * 0.05 + slow,
    positiveSpans: [{ offset: -4, length: 5 }],
    positiveBuckets: [fast, 0, 0, 0, slow],
    negativeSpans: [],
    negativeBuckets: [],
    counterResetHint: 'unknown',
    customValues: [],
  };
}

/** A gauge histogram of a host's queue waits, the same all through a phase. */
function queueWaits(host: number, phase: number): NativeHistogram {
  const buckets = [phase + 1, host + 1, 3];
  return {
    ...latencies(0, 0),
    count: buckets[0]! + buckets[1]! + buckets[2]!,
    sum: 0.5 * buckets[0]! + buckets[1]! + 2 * buckets[2]!,
    positiveSpans: [{ offset: 0, length: 3 }],
    positiveBuckets: buckets,
  };
}

const key = `mon_test_${randomBytes(16).toString('hex')}`;
let database: TestDatabase;
let monitor: RoleProcess;
let prometheus: AgentProcess & { url: string };
const receivers: { ours?: HttpReceiver; prometheus?: HttpReceiver } = {};
let workDir: string;

type Side = 'ours' | 'prometheus';
const sides: Side[] = ['ours', 'prometheus'];

function apiUrl(side: Side): string {
  return side === 'ours' ? `${monitor.baseUrl}/prometheus` : prometheus.url;
}

async function getJson<T>(side: Side, path: string): Promise<T> {
  const response = await fetch(`${apiUrl(side)}${path}`, {
    headers: { Authorization: `Bearer ${key}` },
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${side} ${path} answered ${response.status}: ${text}`);
  return (JSON.parse(text) as { data: T }).data;
}

/** When each side last evaluated the group (epoch ms), once both have. */
async function lastEvaluations(): Promise<Record<Side, number> | undefined> {
  const times = await Promise.all(
    sides.map(async (side) => {
      const { groups } = await getJson<{ groups: { name: string; lastEvaluation: string }[] }>(
        side,
        '/api/v1/rules',
      );
      const group = groups.find((g) => g.name === 'temperatures');
      return group === undefined || group.lastEvaluation.startsWith('0001')
        ? undefined
        : epochMs(group.lastEvaluation);
    }),
  );
  const [ours, theirs] = times;
  return ours === undefined || theirs === undefined ? undefined : { ours, prometheus: theirs };
}

/**
 * The offset (modulo the interval) of the scenario's phase changes: halfway along the longer arc
 * between the two sides' slots, so that each side evaluates a phase at least a quarter interval
 * after its change.
 */
function changeOffsetMs(slots: Record<Side, number>): number {
  const ours = slots.ours % intervalMs;
  const theirs = slots.prometheus % intervalMs;
  const forward = (((theirs - ours) % intervalMs) + intervalMs) % intervalMs;
  const middle =
    forward >= intervalMs - forward ? ours + forward / 2 : theirs + (intervalMs - forward) / 2;
  return Math.round(middle) % intervalMs;
}

/** Writes one tick's samples to both sides. */
async function writeTick(series: SeriesData[]): Promise<void> {
  if (series.length === 0) return;
  const body = encode(series);
  const headers = {
    'Content-Type': 'application/x-protobuf',
    'Content-Encoding': 'snappy',
    'X-Prometheus-Remote-Write-Version': '0.1.0',
  };
  const answers = await Promise.all([
    fetch(`${monitor.baseUrl}/api/v1/write`, {
      method: 'POST',
      headers: { ...headers, Authorization: `Bearer ${key}` },
      body,
    }),
    fetch(`${prometheus.url}/api/v1/write`, { method: 'POST', headers, body }),
  ]);
  for (const answer of answers) {
    if (!answer.ok)
      throw new Error(`remote-write answered ${answer.status}: ${await answer.text()}`);
  }
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'rules-oracle-'));
  const rulesPath = join(workDir, 'temperatures.yml');
  writeFileSync(rulesPath, ruleFile);
  [database, receivers.ours, receivers.prometheus] = await Promise.all([
    createTestDatabase(serviceUrl('postgres'), 'rules_oracle'),
    startHttpReceiver(),
    startHttpReceiver(),
  ]);
  prometheus = await startPrometheus({
    scrapeTargets: [],
    remoteWriteReceiver: true,
    nativeHistograms: true,
    ruleFiles: [ruleFile],
    alertmanagerUrls: [receivers.prometheus.url],
  });
  const env = {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
    NOTIFIER_ALLOWED_TARGET_NETWORKS: receiverNetwork,
  };
  monitor = await startRoleProcess('all', env);
  await runCommand(['rules', 'load', rulesPath], env);
  const channel = await fetch(`${monitor.baseUrl}/api/v1/notification-channels/alertmanager`, {
    method: 'PUT',
    headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
    body: JSON.stringify({ urls: [receivers.ours.url] }),
  });
  expect(channel.status).toBe(200);
}, 180_000);

afterAll(async () => {
  await monitor?.stop();
  await prometheus?.stop();
  await Promise.all([receivers.ours?.close(), receivers.prometheus?.close()]);
  await database?.drop();
  if (workDir !== undefined) rmSync(workDir, { recursive: true, force: true });
});

describe('rule files against Prometheus 2.42', () => {
  it('fires, annotates and resolves the same alerts, and records the same series', async () => {
    const random = createSeededRandom(41);
    /**
     * When phase 1 starts (set once both sides' slots are known); ticks fall `tickOffsetMs` past
     * a second, so that every phase change is a tick.
     */
    const run: { startMs?: number; tickOffsetMs: number; stopped: boolean } = {
      tickOffsetMs: 0,
      stopped: false,
    };
    const ended = new Set<number>();
    const phaseAt = (timeMs: number): number =>
      run.startMs === undefined || timeMs < run.startMs
        ? 0
        : Math.min(phases.length - 1, 1 + Math.floor((timeMs - run.startMs) / phaseMs));

    // Each host's last sample time: a tick after the tick offset moved may come sooner than a
    // whole tick after the last one, and the scrape's lag below must not then put a sample
    // before its series' last one, which Prometheus refuses (out of order), as a scraper never
    // sends.
    const lastTimeMs: number[] = [];
    // Each host's requests so far: 20 fast a second, and 5 slow a second while it is slow.
    const requests = hosts.map(() => ({ fast: 0, slow: 0 }));
    const writing = (async () => {
      while (!run.stopped) {
        const now = Date.now();
        const tick = now - ((((now - run.tickOffsetMs) % tickMs) + tickMs) % tickMs) + tickMs;
        await sleep(tick - now);
        const values = phases[phaseAt(tick)]!;
        const series: SeriesData[] = [];
        hosts.forEach((labels, i) => {
          const value = values[i];
          if (value === undefined || ended.has(i)) return;
          // Scrapes land a little after their timestamp.
          const timeMs = Math.max(tick - Math.floor(random.next() * 150), (lastTimeMs[i] ?? 0) + 1);
          lastTimeMs[i] = timeMs;
          if (value === null) ended.add(i);
          series.push({
            labels: { __name__: 'temp_celsius', ...labels },
            samples: [[timeMs, value ?? Number.NaN]],
          });
          const served = requests[i]!;
          served.fast += 20;
          if (slowPhases[phaseAt(tick)]![i] === true) served.slow += 5;
          series.push(
            {
              labels: { __name__: 'request_duration_seconds', ...labels },
              samples: [],
              histograms: [[timeMs, latencies(served.fast, served.slow)]],
            },
            {
              labels: { __name__: 'queue_wait_seconds', ...labels },
              samples: [],
              histograms: [[timeMs, queueWaits(i, phaseAt(tick))]],
            },
          );
        });
        await writeTick(series);
      }
    })();
    const sleepUntil = (timeMs: number) => sleep(Math.max(0, timeMs - Date.now()));

    // Both sides evaluate on their slots; Prometheus writes ALERTS from its third evaluation on.
    await waitFor(lastEvaluations, 60_000, 'a first evaluation on both sides');
    await sleep(2 * intervalMs);
    const slots = await waitFor(lastEvaluations, 10_000, 'the slots of both sides');
    const offsetMs = changeOffsetMs(slots);
    run.tickOffsetMs = offsetMs % tickMs;
    const earliest = Date.now() + 2 * intervalMs;
    const startMs = earliest + ((((offsetMs - earliest) % intervalMs) + intervalMs) % intervalMs);
    run.startMs = startMs;
    const phaseStart = (phase: number) => startMs + (phase - 1) * phaseMs;

    const alertsApi = async () => {
      const [ours, theirs] = await Promise.all(
        sides.map(async (side) => {
          const { alerts } = await getJson<{ alerts: ApiAlert[] }>(side, '/api/v1/alerts');
          return new Map(alerts.map((alert) => [labelsKey(alert.labels), alert]));
        }),
      );
      return { ours: ours!, prometheus: theirs! };
    };
    await sleepUntil(phaseStart(2) + 6_500);
    const whileWeb2Pending = await alertsApi();
    await sleepUntil(phaseStart(3) + 12_000);
    const afterWeb1Resolved = await alertsApi();
    await sleepUntil(phaseStart(5));
    run.stopped = true;
    await writing;

    // Every alert that fired is resolved on both sides by now; their messages are on the way.
    const expectedFired = (
      [
        {
          alertname: 'HostHot',
          instance: 'web-1:9100',
          job: 'node',
          severity: 'critical',
          team: 'node-team',
        },
        {
          alertname: 'HostHot',
          instance: 'web-2:9100',
          job: 'node',
          severity: 'critical',
          team: 'node-team',
        },
        { alertname: 'JobHot', job: 'node', source: 'rules' },
        { alertname: 'SlowRequests', instance: 'web-1:9100', job: 'node' },
      ] as Record<string, string>[]
    ).map(labelsKey);
    const sent = await waitFor(
      () => {
        const nowMs = Date.now();
        const ours = lifecycles(receivers.ours!, nowMs);
        const theirs = lifecycles(receivers.prometheus!, nowMs);
        const resolved = (map: typeof ours) =>
          expectedFired.every((k) => map.get(k)?.resolved !== undefined);
        return Promise.resolve(
          resolved(ours) && resolved(theirs) ? { ours, prometheus: theirs } : undefined,
        );
      },
      30_000,
      'the resolution of every alert on both sides',
    );
    const endMs = Date.now();
    const rangeSeconds = Math.ceil((endMs - phaseStart(1) + phaseMs) / 1000);
    const [ourSeries, theirSeries] = await Promise.all(
      sides.map(async (side) => {
        const names = 'ALERTS|ALERTS_FOR_STATE|job:temp_celsius:.*|job:queue_wait_seconds:.*';
        const query = `{__name__=~"${names}"}[${rangeSeconds}s]`;
        const params = new URLSearchParams({ query, time: String(endMs / 1000) });
        const { result } = await getJson<{ result: Matrix }>(
          side,
          `/api/v1/query?${params.toString()}`,
        );
        return new Map(result.map((series) => [labelsKey(series.metric), series]));
      }),
    );

    // The scenario did what it is for, on Prometheus.
    expect([...sent.prometheus.keys()].sort()).toEqual([...expectedFired].sort());
    const states = (alerts: Map<string, ApiAlert>) =>
      [...alerts.values()]
        .map(
          (a) => `${a.labels['alertname']} ${a.labels['instance'] ?? a.labels['job']} ${a.state}`,
        )
        .sort();
    expect(states(whileWeb2Pending.prometheus)).toEqual([
      'HostCold db-1:9100 pending',
      'HostHot web-1:9100 firing',
      'HostHot web-2:9100 pending',
      'JobHot node firing',
      'SlowRequests web-1:9100 firing',
    ]);
    expect(states(afterWeb1Resolved.prometheus)).toEqual([
      'HostCold db-1:9100 pending',
      'HostHot web-2:9100 firing',
      'JobHot node firing',
    ]);

    const found: string[] = [];
    found.push(
      ...differences('sent', sent.ours, sent.prometheus, (a, b) => [
        ...same('firing annotations', a.firing?.annotations, b.firing?.annotations),
        ...within(
          'startsAt',
          epochMs(a.firing?.startsAt ?? ''),
          epochMs(b.firing?.startsAt ?? ''),
          intervalMs,
        ),
        ...same('resolved annotations', a.resolved?.annotations, b.resolved?.annotations),
        ...within(
          'endsAt',
          epochMs(a.resolved?.endsAt ?? ''),
          epochMs(b.resolved?.endsAt ?? ''),
          intervalMs,
        ),
      ]),
    );
    for (const [moment, alerts] of [
      ['while web-2 is pending', whileWeb2Pending],
      ['after web-1 resolved', afterWeb1Resolved],
    ] as const) {
      found.push(
        ...differences(`/api/v1/alerts ${moment}`, alerts.ours, alerts.prometheus, (a, b) => [
          ...same('state', a.state, b.state),
          ...same('annotations', a.annotations, b.annotations),
          // A percentile of a rate depends on the window each side's slot saw; above 0.5 on
          // both is what the rule asserts. The temperatures hold still through a phase.
          ...(a.labels['alertname'] === 'SlowRequests'
            ? same('value above 0.5', Number(a.value) > 0.5, Number(b.value) > 0.5)
            : same('value', a.value, b.value)),
          ...within('activeAt', epochMs(a.activeAt), epochMs(b.activeAt), intervalMs),
        ]),
      );
    }
    found.push(
      ...differences('series', ourSeries!, theirSeries!, storedDifferences(phaseAt, intervalMs)),
    );
    // What Prometheus stored, by name: ALERTS of 7 (alert, state) pairs, 5 alerts' for-state
    // series, 3 recorded series of each job (one of them native histograms).
    const names = [...theirSeries!.values()].map((s) => s.metric['__name__']);
    expect(names.sort()).toEqual([
      ...Array<string>(7).fill('ALERTS'),
      ...Array<string>(5).fill('ALERTS_FOR_STATE'),
      'job:queue_wait_seconds:sum',
      'job:queue_wait_seconds:sum',
      'job:temp_celsius:avg',
      'job:temp_celsius:avg',
      'job:temp_celsius:max',
      'job:temp_celsius:max',
    ]);
    const recorded = [...theirSeries!.values()].find(
      (s) => s.metric['__name__'] === 'job:queue_wait_seconds:sum',
    );
    expect(recorded?.histograms?.length).toBeGreaterThan(0);
    expect(found).toEqual([]);
  }, 300_000);
});
