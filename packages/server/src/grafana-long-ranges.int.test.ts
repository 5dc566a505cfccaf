// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrometheus } from '@monitor/testkit';
import type { AgentProcess } from '@monitor/testkit';
import type { ApiReply } from '@monitor/testkit/builders';
import { createApiCall } from '@monitor/testkit/builders';
import { requireStorageSettings } from '../../db/src/schema/storage-settings.js';
import { maintainKeptTiers } from '../../db/src/storage/kept-tiers.js';
import { migratedDatabase } from '../../db/src/testing/clean-database.js';
import type { SeriesData } from './testing/prometheus-fixture.js';
import {
  differences,
  encode,
  normalize,
  remoteWriteToPrometheus,
  startPrometheusApi,
  storeRemoteWrite,
} from './testing/prometheus-fixture.js';

const orgId = 'org_grafana_long';
const apiKey = 'grafana-long-key';
const minuteMs = 60_000;
const dayMs = 24 * 60 * minuteMs;

/**
 * 92 days of two node exporters scraped every minute (scrape jitter of a few milliseconds), as a
 * Prometheus remote-writes them: `web-2` stopped 40 days ago, past the raw retention (30 days),
 * and its CPU counters restarted from zero on day 50.
 */
function history(endMs: number): SeriesData[] {
  const startMs = endMs - 92 * dayMs;
  const out: SeriesData[] = [];
  for (const [h, host] of ['web-1', 'web-2'].entries()) {
    const target = { instance: `${host}:9100`, job: 'node' };
    const lastMs = host === 'web-2' ? endMs - 40 * dayMs : endMs;
    const times: number[] = [];
    for (let t = startMs + h * 7_000; t <= lastMs; t += minuteMs) times.push(t + ((t / 1000) % 5));
    const restart = startMs + 50 * dayMs;
    out.push({ labels: { __name__: 'up', ...target }, samples: times.map((t) => [t, 1]) });
    out.push({
      labels: { __name__: 'node_load1', ...target },
      samples: times.map((t, i) => [t, ((i * 37 + h * 11) % 400) / 100]),
    });
    for (const mode of ['idle', 'user']) {
      const perMinute = mode === 'idle' ? 55.25 : 3.5 + h;
      out.push({
        labels: { __name__: 'node_cpu_seconds_total', cpu: '0', mode, ...target },
        samples: times.map((t) => [
          t,
          ((t - (t < restart ? startMs : restart)) / minuteMs) * perMinute,
        ]),
      });
    }
  }
  return out;
}

type Answer = ApiReply<{ status: string; data?: unknown; warnings?: string[] } | undefined>;
type QueryData = { resultType: string; result: unknown };

/**
 * A Grafana dashboard's panels over 7 and 90 days, as its Prometheus data source (scrape
 * interval 1m, panels 1,000 pixels wide) asks for them, against Prometheus 2.42 holding the same
 * samples: its steps are the range over the width rounded as Grafana rounds them (10m, 2h), its
 * start and end floored to the step, `$__interval` the step and `$__rate_interval` the step plus
 * the scrape interval.
 */
describe("Grafana's 7-day and 90-day panels and variables, against Prometheus 2.42", () => {
  let prometheus: AgentProcess & { url: string };
  let disposeDb: () => Promise<void>;
  let ours: { url: string; close: () => Promise<void> };
  const nowMs = Math.floor(Date.now() / minuteMs) * minuteMs;

  beforeAll(async () => {
    const series = history(nowMs);
    prometheus = await startPrometheus({
      scrapeTargets: [],
      remoteWriteReceiver: true,
      retentionDays: 100,
    });
    const { db, dispose } = await migratedDatabase('postgres', 'grafana_long');
    disposeDb = dispose;
    // Prometheus takes them in time order, half an hour of every series a request, as its
    // remote-write sends what it scrapes; we store them a series at a time.
    const windowMs = 30 * minuteMs;
    for (let fromMs = nowMs - 92 * dayMs; fromMs <= nowMs; fromMs += windowMs) {
      const slice = series
        .map((one) => ({
          ...one,
          samples: one.samples.filter(([t]) => t >= fromMs && t < fromMs + windowMs),
        }))
        .filter((one) => one.samples.length > 0);
      if (slice.length === 0) continue;
      await remoteWriteToPrometheus(prometheus.url, encode(slice));
    }
    for (const one of series) await storeRemoteWrite(db, orgId, encode([one]));
    // As if the writer's maintenance had run all along: it began when the first samples were
    // at the raw retention's edge and stored the tiers up to six hours past today's edge; the
    // raw samples older than the edge are gone, as the retention drops them.
    const { policies } = await requireStorageSettings(db);
    const retentionMs = policies.rawRetentionDays * dayMs;
    for (const at of [nowMs - 92 * dayMs + retentionMs - 60 * minuteMs, nowMs]) {
      await maintainKeptTiers(db, {
        now: new Date(at),
        policies,
        mode: 'postgres',
        maxWindows: 2_000,
      });
    }
    const edge = new Date(nowMs - retentionMs);
    await db.sql`delete from samples where time < ${edge}`;
    await db.sql`delete from stale_markers where time < ${edge}`;
    ours = await startPrometheusApi(db, orgId, apiKey);
  }, 300_000);

  afterAll(async () => {
    await ours?.close();
    await prometheus?.stop();
    await disposeDb?.();
  });

  /**
   * One request to Prometheus and to us (basic auth) as Grafana sends it: a form POST for
   * queries and label names, a GET for label values (which Prometheus takes only so).
   */
  async function both(path: string, params: Record<string, string>) {
    const form = new URLSearchParams(params).toString();
    const call = (base: string, headers: Record<string, string>): Promise<Answer> =>
      createApiCall({ baseUrl: base })(
        path.startsWith('label/') ? `/api/v1/${path}?${form}` : `/api/v1/${path}`,
        path.startsWith('label/')
          ? { headers }
          : {
              method: 'POST',
              headers,
              raw: { data: form, contentType: 'application/x-www-form-urlencoded' },
            },
      );
    const basic = `Basic ${Buffer.from(`grafana:${apiKey}`).toString('base64')}`;
    const [theirs, mine] = await Promise.all([
      call(prometheus.url, {}),
      call(ours.url, { Authorization: basic }),
    ]);
    expect(theirs.status).toBe(200);
    expect(mine.status).toBe(200);
    return { prometheus: theirs.body!, ours: mine.body! };
  }

  /** A panel over the last `days` at `stepSeconds`, the range floored to the step. */
  function panel(days: number, stepSeconds: number, expr: string): Record<string, string> {
    const stepMs = stepSeconds * 1000;
    const floor = (ms: number) => Math.floor(ms / stepMs) * stepSeconds;
    return {
      query: expr,
      start: String(floor(nowMs - days * dayMs)),
      end: String(floor(nowMs)),
      step: String(stepSeconds),
    };
  }

  /** Per series, the largest relative difference of a value (the same points required). */
  function largestRelativeDifference(want: QueryData, got: QueryData): number {
    const a = normalize(want);
    const b = normalize(got);
    if (typeof a === 'string' || typeof b === 'string') throw new Error('not a matrix');
    expect([...b.keys()].sort()).toEqual([...a.keys()].sort());
    let largest = 0;
    for (const [key, points] of a) {
      const other = b.get(key)!;
      expect(other.map(([t]) => t)).toEqual(points.map(([t]) => t));
      points.forEach(([, v], i) => {
        const x = Number(v);
        const y = Number(other[i]![1]);
        largest = Math.max(largest, Math.abs(x - y) / Math.max(Math.abs(x), 1e-12));
      });
    }
    return largest;
  }

  it.each([
    ['node_load1', 'node_load1'],
    ['a rate', 'sum by (mode) (rate(node_cpu_seconds_total[11m]))'],
    ['up', 'sum(up)'],
  ])('answers a 7-day panel (%s) from raw samples, as Prometheus does', async (_name, expr) => {
    const answers = await both('query_range', panel(7, 600, expr));
    expect(answers.ours.warnings).toBeUndefined();
    const want = answers.prometheus.data as QueryData;
    expect((want.result as unknown[]).length).toBeGreaterThan(0);
    expect(differences(normalize(want), normalize(answers.ours.data as QueryData))).toEqual([]);
  });

  // The 5-minute tier is kept 90 days: a 60-day panel reads it, a 90-day one (its start floored
  // to the step, before that) the hourly tier; both exact at their steps and ranges.
  it.each([
    [60, 3600, '5m', 'node_load1'],
    [60, 3600, '5m', 'avg_over_time(node_load1[1h])'],
    [60, 3600, '5m', 'sum(count_over_time(up[1h]))'],
    [90, 7200, '1h', 'node_load1'],
    [90, 7200, '1h', 'avg_over_time(node_load1[2h])'],
    [90, 7200, '1h', 'max by (instance) (max_over_time(node_load1[2h]))'],
    [90, 7200, '1h', 'count_over_time(up[2h])'],
  ] as const)(
    'answers a %i-day panel at a %is step from the %s tier, exactly, and says it read a tier: %s',
    async (days, step, tier, expr) => {
      const answers = await both('query_range', panel(days, step, expr));
      expect(answers.ours.warnings).toEqual([
        `read from ${tier} rollups: the query reaches back past the raw samples kept (max_source_resolution=auto)`,
      ]);
      const want = answers.prometheus.data as QueryData;
      expect((want.result as unknown[]).length).toBeGreaterThan(0);
      expect(differences(normalize(want), normalize(answers.ours.data as QueryData))).toEqual([]);
    },
  );

  it('answers a 90-day rate at $__rate_interval (2h1m) from the tier, approximate and marked so', async () => {
    const answers = await both(
      'query_range',
      panel(90, 7200, 'sum by (mode) (rate(node_cpu_seconds_total[2h1m]))'),
    );
    expect(answers.ours.warnings).toEqual([
      expect.stringMatching(/^read from 1h rollups/),
      expect.stringMatching(/^approximate: read from 1h rollups/),
    ]);
    // Without Prometheus' extrapolation, over a window not a whole number of buckets: within a
    // few percent (the counter restart on day 50 counted on both sides).
    const largest = largestRelativeDifference(
      answers.prometheus.data as QueryData,
      answers.ours.data as QueryData,
    );
    expect(largest).toBeLessThan(0.05);
  });

  it('fills the variables of a 90-day dashboard as Prometheus does (label_values, with and without a metric)', async () => {
    const range = panel(90, 7200, '');
    const window = { start: range.start!, end: range.end! };
    for (const [path, params] of [
      ['label/instance/values', { ...window, 'match[]': 'node_load1' }],
      ['label/instance/values', window],
      [
        'label/mode/values',
        { ...window, 'match[]': 'node_cpu_seconds_total{instance="web-2:9100"}' },
      ],
      ['labels', { ...window, 'match[]': 'up' }],
    ] as const) {
      const answers = await both(path, params);
      expect(answers.ours.data).toEqual(answers.prometheus.data);
    }
    const hosts = await both('label/instance/values', window);
    expect(hosts.ours.data).toEqual(['web-1:9100', 'web-2:9100']);
    // Over the last week web-2 is gone, on both sides.
    const week = panel(7, 600, '');
    const recent = await both('label/instance/values', { start: week.start!, end: week.end! });
    expect(recent.ours.data).toEqual(['web-1:9100']);
    expect(recent.prometheus.data).toEqual(['web-1:9100']);
  });
});
