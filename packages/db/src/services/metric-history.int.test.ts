// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migrateWith } from '../schema/migrate.js';
import { migrations } from '../schema/migrations.js';
import { requireStorageSettings } from '../schema/storage-settings.js';
import { maintainKeptTiers } from '../storage/kept-tiers.js';
import { materializationTable } from '../storage/timescale/tables.js';
import { cleanDatabase } from '../testing/clean-database.js';
import type { MetricBucketRow } from './metric-history.js';
import { readMetricHistory } from './metric-history.js';

const minuteMs = 60_000;
const fiveMinutesMs = 5 * minuteMs;
const hourMs = 60 * minuteMs;
const dayMs = 24 * hourMs;

type Point = [timeMs: number, value: number];

/**
 * The buckets a history must report for these points: `start(t)` the start of each point's
 * bucket, values summed in the order given (the database may add them in another: compared
 * to 1e-9 below).
 */
function expectedBuckets(
  points: readonly Point[],
  start: (t: number) => number,
  [fromMs, toMs]: [number, number],
) {
  const buckets = new Map<number, number[]>();
  for (const [timeMs, value] of points) {
    const at = start(timeMs);
    buckets.set(at, [...(buckets.get(at) ?? []), value]);
  }
  return [...buckets.entries()]
    .filter(([at]) => at >= fromMs && at < toMs)
    .sort(([a], [b]) => a - b)
    .map(([timeMs, values]) => ({
      timeMs,
      avg: values.reduce((sum, v) => sum + v, 0) / values.length,
      min: Math.min(...values),
      max: Math.max(...values),
      count: values.length,
    }));
}

const rounded = (rows: readonly MetricBucketRow[]) =>
  rows.map((row) => ({ ...row, avg: Math.round(row.avg * 1e9) / 1e9 }));

describe.each(['postgres', 'timescale'] as const)(
  'a metric’s history when samples_1m and samples_1h are retired, on %s',
  (engine) => {
    let db: Database;
    let dispose: () => Promise<void>;
    const now = Date.now();
    // Raw samples kept 3 days: on TimescaleDB samples_1m materializes the minutes 72 to 69
    // hours back (policies.ts); plain PostgreSQL materializes every complete minute.
    // Nothing compressed by the scheduler while the test reads (it compresses nothing itself).
    const policies = { rawRetentionDays: 3, compressAfterHours: 1_000 };
    const t0 = Math.ceil((now - 72 * hourMs) / fiveMinutesMs) * fiveMinutesMs + fiveMinutesMs;
    // After where samples_1m stopped on both engines (plain: the refresh's minute).
    const t1 = Math.ceil(now / hourMs) * hourMs;
    const orgId = uniqueOrgId();
    let ids: string[] = [];

    /**
     * An hour or two of `load` from an agent's two label sets, 15 s apart with scrape jitter,
     * at two decimals (cpu 0) and at three (cpu 1).
     */
    async function write(fromMs: number, toMs: number): Promise<Point[]> {
      const points: Point[] = [];
      const samples = [];
      for (let k = 0, t = fromMs; t < toMs; k++, t += 15_000) {
        for (const cpu of ['0', '1']) {
          const timeMs = t + ((k * 7_919 + Number(cpu) * 311) % 300) - 150 + (cpu === '1' ? 40 : 0);
          const value =
            cpu === '0'
              ? Math.round(Math.sin(k / 30) * 10_000) / 100
              : Math.round(Math.cos(k / 17) * 100_000) / 1_000;
          points.push([timeMs, value]);
          samples.push(
            buildHostSample({
              orgId,
              host: 'h',
              timeMs,
              metrics: { load: value },
              tags: { cpu },
              tagsLabelSeries: true,
            }),
          );
        }
      }
      await createSampleStore(db).writeBatch({ samples });
      return points;
    }

    /** The buckets a rollup materialized for the series. */
    async function materialized(rollup: 'samples_1m' | 'samples_1h'): Promise<number> {
      const table =
        engine === 'postgres'
          ? `${rollup}_materialized`
          : await materializationTable(db.sql, rollup);
      const [row] = await db.sql.unsafe<{ buckets: number }[]>(
        `select count(*)::int as buckets from ${table} where series_id = any($1::bigint[])`,
        [ids],
      );
      return row!.buckets;
    }
    const materializedMinutes = () => materialized('samples_1m');

    const history = (step: '1m' | '1h', fromMs: number, toMs: number) =>
      readMetricHistory(db.sql, { step, fromMs, toMs }, ids);

    beforeAll(async () => {
      ({ db, dispose } = await cleanDatabase(engine, 'metric_history'));
      await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 36),
        policies,
      );
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('answers as before from the buckets samples_1m and samples_1h materialized, then from the 5-minute and hourly tiers where the raw samples are gone', async () => {
      const early = await write(t0, t0 + 2 * hourMs);
      ids = (
        await db.sql<{ id: string }[]>`
          select r.id::text as id from series r join services s on s.id = r.service_id
          where s.org_id = ${orgId} and r.metric = 'load' order by r.id`
      ).map((row) => row.id);
      expect(ids).toHaveLength(2);
      await refreshRollups(db, { now: new Date(now) });
      // Two series, 120 minutes each and the one of the first sample's jitter.
      expect(await materializedMinutes()).toBe(242);
      const hoursMaterialized = await materialized('samples_1h');
      expect(hoursMaterialized).toBeGreaterThanOrEqual(4);
      const minutesBefore = await history('1m', t0, t0 + 2 * hourMs);
      const hoursBefore = await history('1h', t0 - hourMs, t0 + 3 * hourMs);
      expect(rounded(minutesBefore)).toEqual(
        rounded(
          expectedBuckets(early, (t) => Math.floor(t / minuteMs) * minuteMs, [t0, t0 + 2 * hourMs]),
        ),
      );

      await migrateWith(db, migrations, policies);
      const [retired] = await db.sql<{ to_ms: string }[]>`
        select materialized_to_ms::text as to_ms from retired_rollups where rollup = 'samples_1m'`;
      expect(Number(retired!.to_ms)).toBeGreaterThanOrEqual(t0 + 2 * hourMs);
      expect(Number(retired!.to_ms)).toBeLessThanOrEqual(t1);
      const [retiredHours] = await db.sql<{ to_ms: string }[]>`
        select materialized_to_ms::text as to_ms from retired_rollups where rollup = 'samples_1h'`;
      expect(Number(retiredHours!.to_ms)).toBeGreaterThanOrEqual(t0 + 2 * hourMs);
      expect(Number(retiredHours!.to_ms)).toBeLessThanOrEqual(t1);
      // Exactly the same answers: the materialized minutes stay until their retention.
      expect(await history('1m', t0, t0 + 2 * hourMs)).toEqual(minutesBefore);
      expect(await history('1h', t0 - hourMs, t0 + 3 * hourMs)).toEqual(hoursBefore);
      // Nothing is materialized into either any more.
      const late = await write(t1, t1 + hourMs);
      await refreshRollups(db, { now: new Date(t1 + 2 * hourMs) });
      expect(await materializedMinutes()).toBe(242);
      expect(await materialized('samples_1h')).toBe(hoursMaterialized);
      // The newest minutes and hours are computed from the raw samples as they are read.
      const byMinute = (t: number) => Math.floor(t / minuteMs) * minuteMs;
      expect(rounded(await history('1m', t1 - hourMs, t1 + 2 * hourMs))).toEqual(
        rounded(expectedBuckets(late, byMinute, [t1 - hourMs, t1 + 2 * hourMs])),
      );
      const byHour = (t: number) => Math.floor(t / hourMs) * hourMs;
      expect(rounded(await history('1h', t1 - hourMs, t1 + 2 * hourMs))).toEqual(
        rounded(expectedBuckets(late, byHour, [t1 - hourMs, t1 + 2 * hourMs])),
      );

      // Three days on, the writer's maintenance stores the tiers of that hour before the raw
      // retention drops it; then its raw samples go.
      const { mode } = await requireStorageSettings(db);
      const later = new Date(t1 + policies.rawRetentionDays * dayMs);
      const upkeep = await maintainKeptTiers(db, {
        now: later,
        policies: (await requireStorageSettings(db)).policies,
        mode,
        maxWindows: 48,
      });
      expect(upkeep.filled.map((fill) => fill.filledToMs > t1 + hourMs)).toEqual([true, true]);
      if (engine === 'postgres') {
        await db.sql`delete from samples where series_id = any(${ids}::bigint[])
          and time >= ${new Date(t1 - minuteMs)}`;
      } else {
        await db.sql`delete from samples where series_id = any(${ids}::bigint[])
          and time >= ${t1 - minuteMs}`;
      }
      expect(await history('1m', t1, t1 + hourMs + fiveMinutesMs)).not.toEqual([]);
      // A point every 5 minutes, at the start of its bucket (start, start + 5 min]. The tier's
      // first fill started at the raw retention's edge, t1: the sample just before it is gone.
      const byTierBucket = (t: number) =>
        Math.ceil(t / fiveMinutesMs) * fiveMinutesMs - fiveMinutesMs;
      expect(rounded(await history('1m', t1 - hourMs, t1 + 2 * hourMs))).toEqual(
        rounded(expectedBuckets(late, byTierBucket, [t1, t1 + 2 * hourMs])),
      );
      // An hour's point at the start of its bucket (start, start + 1 h], from the hourly tier.
      const byHourlyTierBucket = (t: number) => Math.ceil(t / hourMs) * hourMs - hourMs;
      expect(rounded(await history('1h', t1 - hourMs, t1 + 2 * hourMs))).toEqual(
        rounded(expectedBuckets(late, byHourlyTierBucket, [t1, t1 + 2 * hourMs])),
      );
      // What samples_1m and samples_1h hold still reads as it did.
      expect(await history('1m', t0, t0 + 2 * hourMs)).toEqual(minutesBefore);
      expect(await history('1h', t0 - hourMs, t0 + 3 * hourMs)).toEqual(hoursBefore);
    });
  },
);
