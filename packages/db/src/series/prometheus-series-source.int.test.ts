// @services postgres timescale
import { getEventListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LabelMatcher, SourceSeries } from '@monitor/promql';
import { bucketSeries, createLabelMatcher } from '@monitor/promql';
import { buildHostSample } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database } from '../core/database.js';
import { createDatabase } from '../core/database.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { requireStorageSettings } from '../schema/storage-settings.js';
import { maintainKeptTiers } from '../storage/kept-tiers.js';
import { migratedDatabase } from '../testing/clean-database.js';
import { createFloat64SlabPool } from './binary-arrays.js';
import { createPrometheusSeriesSource } from './prometheus-series-source.js';

const orgId = 'org_series_source';
const minuteMs = 60_000;

function sample(overrides: Partial<HostSample> & Pick<HostSample, 'timeMs'>): HostSample {
  return buildHostSample({ orgId, host: 'h', ...overrides });
}

const equal = (name: string, value: string): LabelMatcher => createLabelMatcher(name, '=', value);

/** A series as plain data: labels as a record, points as [time, value] (NaN a marker). */
const plain = (series: SourceSeries[]) =>
  series.map((s) => ({
    labels: Object.fromEntries(s.labels.map((l) => [l.name, l.value])),
    points: Array.from(s.timestampsMs, (t, i) => [t, s.values[i]]),
  }));

/** A tier's aggregates with every column as a plain array, whatever array a source used. */
const plainBuckets = (buckets: SourceSeries['buckets']) =>
  buckets && {
    ...buckets,
    ...Object.fromEntries(
      (['count', 'sum', 'min', 'max', 'resetSum'] as const).map((c) => [c, Array.from(buckets[c])]),
    ),
  };

describe('the PromQL series source over stored series', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const t0 = Math.floor(Date.now() / 1000) * 1000 - 30 * minuteMs;
  const range = { startMs: t0 - minuteMs, endMs: t0 + 10 * minuteMs };
  const hints = { stepMs: 0, rangeMs: 0, func: null, maxSeries: 1000 };
  const signal = new AbortController().signal;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'series_source'));
    const store = createSampleStore(db);
    // Before series had labels: `up` of host h as one series, labelled by the host's tags.
    await store.writeBatch({
      samples: [sample({ timeMs: t0, metrics: { up: 1 }, tags: { job: 'node' } })],
    });
    // Then through an agent protocol with a `host` label: the same labels (one series to
    // PromQL), another tag set, and staleness markers.
    const labelled = (timeMs: number, job: string, metrics: Record<string, number>) =>
      sample({ timeMs, metrics, tags: { host: 'h', job }, tagsLabelSeries: true });
    await store.writeBatch({
      samples: [
        labelled(t0 + 15_000, 'node', { up: 2 }),
        labelled(t0 + 15_000, 'other', { up: 7 }),
        { ...labelled(t0 + 30_000, 'node', {}), staleMetrics: ['up'] },
        labelled(t0 + 45_000, 'node', { up: 3 }),
        { ...labelled(t0 + 15_000, 'gone', {}), staleMetrics: ['up'] },
      ],
    });
    // As a stock Prometheus writes it: `instance` and `job`, no `host` (service 10.0.0.1).
    await store.writeBatch({
      samples: [
        sample({
          host: '10.0.0.1',
          timeMs: t0 + 15_000,
          metrics: { node_load1: 0.5 },
          tags: { instance: '10.0.0.1:9100', job: 'node' },
          tagsLabelSeries: true,
        }),
      ],
    });
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('reads series with equal labels as one, in time order, staleness markers as NaN', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const selected = await source.select([equal('__name__', 'up')], range, hints, signal);
    expect(plain(selected).sort((a, b) => a.labels.job!.localeCompare(b.labels.job!))).toEqual([
      {
        labels: { __name__: 'up', host: 'h', job: 'gone' },
        points: [[t0 + 15_000, Number.NaN]],
      },
      {
        labels: { __name__: 'up', host: 'h', job: 'node' },
        points: [
          [t0, 1],
          [t0 + 15_000, 2],
          [t0 + 30_000, Number.NaN],
          [t0 + 45_000, 3],
        ],
      },
      { labels: { __name__: 'up', host: 'h', job: 'other' }, points: [[t0 + 15_000, 7]] },
    ]);
  });

  it('reads a rollup tier of a series stored under several ids as the tier of its points', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const matchers = [equal('__name__', 'up'), equal('job', 'node')];
    const [raw] = await source.select(matchers, range, hints, signal);
    const widthMs = 30_000;
    const [tier] = await source.select(
      matchers,
      range,
      { ...hints, resolutionMs: widthMs },
      signal,
    );
    const stale = Array.from(raw!.values, (v) => (Number.isNaN(v) ? 1 : 0));
    const reference = bucketSeries(raw!.timestampsMs, raw!.values, stale, widthMs);
    expect(plain([tier!])).toEqual(
      plain([
        { labels: raw!.labels, timestampsMs: reference.timestampsMs, values: reference.values },
      ]),
    );
    expect(plainBuckets(tier!.buckets)).toEqual(plainBuckets(reference.buckets));
    // The unlabelled sample and the labelled ones after it, in one tier.
    expect(Array.from(tier!.buckets?.count ?? []).reduce((a, b) => a + b, 0)).toBe(3);
  });

  it('matches a label whether the series carries it or its service does', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const node = await source.select(
      [equal('__name__', 'up'), equal('job', 'node')],
      range,
      hints,
      signal,
    );
    expect(plain(node).map((s) => s.points.length)).toEqual([4]);
    const other = await source.select([equal('job', 'other')], range, hints, signal);
    expect(plain(other).map((s) => s.labels)).toEqual([
      { __name__: 'up', host: 'h', job: 'other' },
    ]);
  });

  it('lists a series whose only point in range is a staleness marker, as Prometheus does', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const around = { startMs: t0 + 10_000, endMs: t0 + 20_000 };
    const series = await source.series([[equal('__name__', 'up')]], around, 100, signal);
    expect(series.map((labels) => labels.find((l) => l.name === 'job')?.value).sort()).toEqual([
      'gone',
      'node',
      'other',
    ]);
    const later = { startMs: t0 + 50_000, endMs: t0 + 60_000 };
    expect(await source.labelValues('job', [], later, signal)).toEqual([]);
    expect(await source.labelValues('job', [], around, signal)).toEqual(['gone', 'node', 'other']);
  });

  it('reads a series back with exactly the labels it was written with, no host added', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const written = { __name__: 'node_load1', instance: '10.0.0.1:9100', job: 'node' };
    const selected = await source.select([equal('job', 'node')], range, hints, signal);
    expect(plain(selected).map((s) => s.labels)).toContainEqual(written);
    expect(await source.series([[equal('__name__', 'node_load1')]], range, 10, signal)).toEqual([
      Object.entries(written).map(([name, value]) => ({ name, value })),
    ]);
    expect(await source.labelNames([[equal('__name__', 'node_load1')]], range, signal)).toEqual([
      '__name__',
      'instance',
      'job',
    ]);
    expect(await source.labelValues('host', [], range, signal)).toEqual(['h']);
    // Its service is no label: a `host` matcher finds it only by a label it carries.
    expect(await source.select([equal('host', '10.0.0.1')], range, hints, signal)).toEqual([]);
    expect(
      plain(await source.select([equal('instance', '10.0.0.1:9100')], range, hints, signal)),
    ).toEqual([{ labels: written, points: [[t0 + 15_000, 0.5]] }]);
  });

  it('matches host on the service of an /ingest series and on the label of the others', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const selected = await source.select(
      [equal('__name__', 'up'), equal('host', 'h'), equal('job', 'node')],
      range,
      hints,
      signal,
    );
    expect(plain(selected).map((s) => s.points.length)).toEqual([4]);
  });

  it('listens to a query’s signal once per selection, whatever its reads, and lets go after', async () => {
    const source = createPrometheusSeriesSource(db, orgId);
    const { signal: shared } = new AbortController();
    const warnings: string[] = [];
    const onWarning = (warning: Error) => warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      // Eight selections of one query at once, as a long `or` makes: eight listeners, where
      // one per read would pass the ten after which Node warns of a leak.
      const selections = await Promise.all(
        Array.from({ length: 8 }, () =>
          source.select([equal('__name__', 'up')], range, hints, shared),
        ),
      );
      const [first] = selections;
      expect(first?.length).toBeGreaterThan(0);
      for (const selected of selections) expect(selected).toEqual(first);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings).not.toContain('MaxListenersExceededWarning');
    expect(getEventListeners(shared, 'abort')).toEqual([]);
  });
});

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

/**
 * Stores `samples` (all within a few hours after `t0`, 45 days ago), then the kept tiers as the
 * writer's maintenance stores them before the raw retention drops them, then deletes the raw
 * samples, as the retention does.
 */
async function keptOnly(
  db: Database,
  engine: 'postgres' | 'timescale',
  t0: number,
  samples: HostSample[],
): Promise<void> {
  await createSampleStore(db).writeBatch({ samples });
  const { policies } = await requireStorageSettings(db);
  await maintainKeptTiers(db, {
    now: new Date(t0 + policies.rawRetentionDays * dayMs - hourMs),
    policies,
    mode: engine,
    maxWindows: 48,
  });
  await db.sql`delete from samples`;
}

// On plain PostgreSQL (TimescaleDB installed there but not preloaded, as CI has it) and on
// TimescaleDB with its background workers: the read's transaction and JIT settings on both.
describe.each(['postgres', 'timescale'] as const)(
  'the PromQL series source over long series (%s)',
  (server) => {
    it('reads series longer than the driver buffers and the socket reads, selections after and beside each other on one connection, over any range', async () => {
      const { db, dispose } = await migratedDatabase(server, 'series_source_long');
      // One connection: a COPY that left its socket paused would hang every later query
      // (packages/postgres-driver/CHANGES.md, change 11).
      const url = new URL(serviceUrl(server));
      url.pathname = `/${db.sql.options.database}`;
      const one = createDatabase({ url: url.toString(), maxConnections: 1 });
      try {
        // 4,000 points a series: each row of the COPY about 48 kB, past the 16 kB the driver's
        // COPY stream buffers, and eight of them so that most rows straddle the socket's 64 kB
        // reads (the driver joins a message from its own bytes: change 14).
        const t0 = Math.floor(Date.now() / 1000) * 1000 - 2 * 3_600_000;
        const times = Array.from({ length: 4000 }, (_, i) => t0 + i * 1000);
        const hosts = Array.from({ length: 8 }, (_, h) => `h${h}`);
        const value = (h: number, i: number) => (i % 7 === 0 ? -0 : i / 8 - 100 * h);
        await createSampleStore(db).writeBatch({
          samples: hosts.flatMap((host, h) =>
            times.map((timeMs, i) => sample({ host, timeMs, metrics: { load: value(h, i) } })),
          ),
        });
        const source = createPrometheusSeriesSource(one, orgId);
        const hints = { stepMs: 0, rangeMs: 0, func: null, maxSeries: 10 };
        const select = (range: { startMs: number; endMs: number }) =>
          source.select([equal('__name__', 'load')], range, hints, new AbortController().signal);
        const expectAll = (selected: SourceSeries[]) => {
          const byHost = new Map(plain(selected).map((s) => [s.labels.host, s.points]));
          expect([...byHost.keys()].sort()).toEqual(hosts);
          hosts.forEach((host, h) => {
            expect(byHost.get(host)).toEqual(times.map((t, i) => [t, value(h, i)]));
          });
        };
        // Times come as offsets from the range's start below 2^31 ms, as epoch ms past it.
        const near = { startMs: t0, endMs: t0 + 4000 * 1000 };
        const wide = { startMs: t0 - 30 * 86_400_000, endMs: t0 + 4000 * 1000 };
        // Rounds one after the other, two selections at once in each: the COPY holds its
        // connection, and hands it back usable.
        for (let round = 0; round < 3; round++) {
          const both = await Promise.all([select(near), select(round === 1 ? wide : near)]);
          both.forEach(expectAll);
        }
        // A read canceled wherever it stands (its transaction, its COPY) gives the connection
        // back clean, the next selection on it reading everything; and a cancel that lands as
        // the COPY starts is no uncaught 'error' of its stream (the driver's change 13).
        for (let afterMs = 0; afterMs < 15; afterMs++) {
          const controller = new AbortController();
          const canceled = source.select(
            [equal('__name__', 'load')],
            near,
            hints,
            controller.signal,
          );
          setTimeout(() => controller.abort(), afterMs);
          await canceled.then(expectAll, (err: unknown) => {
            expect(err).toMatchObject({ name: 'PromqlError' });
          });
          expectAll(await select(near));
        }
        // Through a pool of slabs, as the api reads (4 arrays of 4,000 to a slab): a query
        // released as soon as it fails, its reads still running, never writes into the slabs of
        // the queries after it, which answer every value.
        const pool = createFloat64SlabPool({ maxIdleSlabs: 64, slabLength: 16_384 });
        const pooled = (slabs: ReturnType<typeof pool.lease>, signal: AbortSignal) =>
          createPrometheusSeriesSource(one, orgId, { slabs }).select(
            [equal('__name__', 'load')],
            near,
            hints,
            signal,
          );
        for (let afterMs = 0; afterMs < 10; afterMs++) {
          const first = pool.lease();
          const controller = new AbortController();
          const canceled = pooled(first, controller.signal).catch((err: unknown) => {
            expect(err).toMatchObject({ name: 'PromqlError' });
          });
          setTimeout(() => {
            controller.abort();
            first.release();
          }, afterMs);
          const next = pool.lease();
          const answered = await pooled(next, new AbortController().signal);
          await canceled;
          expectAll(answered);
          next.release();
        }
        expect(pool.idleSlabs()).toBeGreaterThan(0);
      } finally {
        await one.close();
        await dispose();
      }
    });

    it('reads the stored tier of hundreds of series, split over two connections, each series its own buckets', async () => {
      const { db, dispose } = await migratedDatabase(server, 'series_source_kept_many');
      try {
        // 250 hosts an hour and a half long, 45 days ago (past the raw retention), host h at h.
        const t0 = Math.floor(Date.now() / hourMs) * hourMs - 45 * dayMs;
        const hosts = Array.from({ length: 250 }, (_, h) => h);
        await keptOnly(
          db,
          server,
          t0,
          hosts.flatMap((h) =>
            Array.from({ length: 6 }, (_, i) =>
              sample({
                host: `many-${h}`,
                timeMs: t0 + i * 15 * 60_000 + 1,
                metrics: { load: h + i / 4 },
              }),
            ),
          ),
        );
        const selected = await createPrometheusSeriesSource(db, orgId).select(
          [equal('__name__', 'load')],
          { startMs: t0, endMs: t0 + 3 * hourMs },
          { stepMs: hourMs, rangeMs: hourMs, func: null, maxSeries: 1000, resolutionMs: hourMs },
          new AbortController().signal,
        );
        expect(selected).toHaveLength(250);
        for (const series of selected) {
          const h = Number(
            series.labels.find((l) => l.name === 'host')!.value.slice('many-'.length),
          );
          // Two hourly buckets: the samples at 0, 15, 30, 45 min, then those at 60 and 75.
          expect(Array.from(series.buckets!.count)).toEqual([4, 2]);
          expect(Array.from(series.buckets!.max)).toEqual([h + 0.75, h + 1.25]);
          expect(Array.from(series.values)).toEqual([h + 0.75, h + 1.25]);
        }
      } finally {
        await dispose();
      }
    });

    it('lists a series whose raw samples are gone by the buckets a kept tier holds of it', async () => {
      const { db, dispose } = await migratedDatabase(server, 'series_source_kept');
      try {
        // Two hosts an hour long, 45 days ago; the kept tiers stored, then the raw samples gone.
        const t0 = Math.floor(Date.now() / hourMs) * hourMs - 45 * dayMs;
        await keptOnly(
          db,
          server,
          t0,
          ['kept-1', 'kept-2'].flatMap((host) =>
            Array.from({ length: 240 }, (_, i) =>
              sample({ host, timeMs: t0 + i * 15_000, metrics: { load: i } }),
            ),
          ),
        );
        const source = createPrometheusSeriesSource(db, orgId);
        const signal = new AbortController().signal;
        const hosts = async (range: { startMs: number; endMs: number }) => [
          await source.labelValues('host', [[equal('__name__', 'load')]], range, signal),
          (await source.series([[equal('__name__', 'load')]], range, 10, signal)).length,
        ];
        // A Grafana variable over the last 90 days, and over the hour itself.
        expect(await hosts({ startMs: Date.now() - 90 * dayMs, endMs: Date.now() })).toEqual([
          ['kept-1', 'kept-2'],
          2,
        ]);
        expect(await hosts({ startMs: t0 + 10 * 60_000, endMs: t0 + 20 * 60_000 })).toEqual([
          ['kept-1', 'kept-2'],
          2,
        ]);
        // Past the hour's last bucket (and the raw samples, gone): nothing.
        expect(await hosts({ startMs: t0 + 2 * hourMs, endMs: Date.now() })).toEqual([[], 0]);
      } finally {
        await dispose();
      }
    });
  },
);
