// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLabelMatcher } from '@monitor/promql';
import { buildHostSample } from '@monitor/testkit/builders';
import type { Database } from '../core/database.js';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import { createPrometheusSeriesSource } from '../series/prometheus-series-source.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { HostSample } from './sample-batch.js';
import { createSampleStore } from './sample-store.js';

const orgId = 'org_unaggregated';
const minuteMs = 60_000;

describe.each(['postgres', 'timescale'] as const)(
  'values the aggregates skip (NaN, ±Inf, beyond ±1e100) on %s',
  (engine) => {
    let db: Database;
    let dispose: () => Promise<void>;
    // A complete minute, an hour back (within the aggregates' refresh window).
    const t0 = Math.floor(Date.now() / minuteMs) * minuteMs - 60 * minuteMs;
    const values: [number, number][] = [
      [t0, 1],
      [t0 + 1_000, Number.NaN],
      [t0 + 2_000, Number.POSITIVE_INFINITY],
      [t0 + 3_000, Number.NEGATIVE_INFINITY],
      [t0 + 4_000, 1e300],
      [t0 + 5_000, -Number.MAX_VALUE],
      [t0 + 6_000, 3],
    ];
    const sample = (timeMs: number, metrics: Record<string, number>): HostSample =>
      buildHostSample({
        orgId,
        host: 'h',
        timeMs,
        metrics,
        tags: { instance: 'h:9100', job: 'node' },
        tagsLabelSeries: true,
      });
    const batch = {
      samples: [
        ...values.map(([t, v]) => sample(t, { q: v })),
        // A staleness marker, then a NaN value after it: the two stay apart.
        { ...sample(t0 + 7_000, {}), staleMetrics: ['q'] },
        sample(t0 + 8_000, { q: Number.NaN }),
      ],
    };
    let written: Awaited<ReturnType<ReturnType<typeof createSampleStore>['writeBatch']>>;

    beforeAll(async () => {
      ({ db, dispose } = await migratedDatabase(engine, `unaggregated_${engine}`));
      written = await createSampleStore(db).writeBatch(batch);
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('keeps them apart from samples, each value as written', async () => {
      expect(written).toMatchObject({ samplesWritten: 8, staleMarkersWritten: 1 });
      const samples = await db.sql<{ v: number }[]>`
        select value as v from raw_samples(array(select id from series), 0, ${t0 + minuteMs})
        order by time_ms
      `;
      expect(samples.map((row) => row.v)).toEqual([1, 3]);
      const apart = await db.sql<{ t: Date; v: number }[]>`
        select time as t, value as v from unaggregated_samples order by time
      `;
      expect(apart.map((row) => [row.t.getTime(), row.v])).toEqual([
        ...values.filter(([, v]) => v !== 1 && v !== 3),
        [t0 + 8_000, Number.NaN],
      ]);
    });

    it('stores a replayed batch once', async () => {
      const again = await createSampleStore(db).writeBatch(batch);
      expect(again).toMatchObject({ samplesWritten: 0, duplicatesSkipped: 8 });
    });

    it('leaves them out of the aggregates', async () => {
      await refreshRollups(db, { now: new Date() });
      const [minute] = await db.sql<{ count: string; min: number; max: number; sum: number }[]>`
        select count, min, max, sum
        from samples_1m_buckets(array(select id from series), ${t0}, ${t0 + minuteMs})
      `;
      expect(minute).toEqual({ count: '2', min: 1, max: 3, sum: 4 });
    });

    it('reads them back through PromQL’s source, the staleness marker flagged', async () => {
      const source = createPrometheusSeriesSource(db, orgId);
      const [series, ...others] = await source.select(
        [createLabelMatcher('__name__', '=', 'q')],
        { startMs: t0, endMs: t0 + minuteMs },
        { stepMs: 0, rangeMs: 0, func: null, maxSeries: 10 },
        new AbortController().signal,
      );
      expect(others).toEqual([]);
      expect(Array.from(series!.timestampsMs)).toEqual([
        ...values.map(([t]) => t),
        t0 + 7_000,
        t0 + 8_000,
      ]);
      expect(Array.from(series!.values)).toEqual([
        ...values.map(([, v]) => v),
        Number.NaN,
        Number.NaN,
      ]);
      expect(Array.from(series!.stale ?? [])).toEqual([0, 0, 0, 0, 0, 0, 0, 1, 0]);
      const labels = Object.fromEntries(series!.labels.map((l) => [l.name, l.value]));
      expect(labels).toEqual({ __name__: 'q', instance: 'h:9100', job: 'node' });
    });
  },
);
