// @services postgres
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { rollupValueBound } from '../storage/rollups.js';
import type { RollupChunkSetAside } from '../storage/rollups.js';
import { refreshRollups, RollupsSetAsideError, runMaintenance } from './run-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { createServiceQueries } from '../services/service-queries.js';
import { migrateBefore } from '../schema/migrate.js';
import { cleanDatabase, migratedDatabase } from '../testing/clean-database.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
/** The largest double: what an agent could store before the input policy bounded values. */
const doubleMax = 1.7976931348623157e308;

function sample(orgId: string, host: string, timeMs: number, value: number): HostSample {
  return buildHostSample({ orgId, host, timeMs, metrics: { load: value } });
}

/**
 * Values stored before the edge refused them must not make metrics reads 500; on a database
 * that still refreshes its rollups (before migration 37 retired samples_1h), no organization's
 * data that makes a rollup statement fail may stop the rollups of every other one.
 */
describe('rollups and metrics reads with hostile stored values (plain PostgreSQL)', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const now = new Date();
  const hourStart = Math.floor(now.getTime() / hourMs) * hourMs - hourMs; // a complete hour
  const huge = uniqueOrgId();
  const normal = uniqueOrgId();

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'db_rollup_isolation'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  const serviceOf = async (orgId: string): Promise<string> => {
    const [row] = await db.sql<{ id: string }[]>`select id from services where org_id = ${orgId}`;
    return row!.id;
  };

  const rollupRows = (table: 'samples_1m' | 'samples_1h', serviceId: string) =>
    db.sql<{ bucket: Date; avg: number; min: number; max: number; count: string; sum: number }[]>`
      select o.bucket, o.avg, o.min, o.max, o.count, o.sum
      from ${db.sql(`${table}_materialized`)} o join series r on r.id = o.series_id
      where r.service_id = ${serviceId} and r.metric = 'load' order by o.bucket
    `;

  it('reads samples of ±1.8e308 clamped to ±1e100 per minute and per hour, and materializes nothing', async () => {
    const store = createSampleStore(db);
    await store.writeBatch({
      samples: [
        sample(huge, 'h', hourStart + 2 * minuteMs + 1_000, 0),
        sample(normal, 'n', hourStart, 1),
        sample(normal, 'n', hourStart + 1_000, 3),
      ],
    });
    const hugeService = await serviceOf(huge);
    // Stored in `samples` before the edge bounded values (the store now keeps such values in
    // unaggregated_samples): written there directly. Two of them in one minute used to
    // overflow sum() and avg(): "value out of range".
    const legacy: [number, number][] = [
      [hourStart, doubleMax],
      [hourStart + 1_000, doubleMax],
      [hourStart + minuteMs, -doubleMax],
      [hourStart + 2 * minuteMs, 1e200],
    ];
    await db.sql`
      insert into samples (time, series_id, value)
      select timestamptz 'epoch' + t * interval '1 millisecond', r.id, v
      from series r, unnest(${legacy.map(([t]) => t)}::float8[],
        ${legacy.map(([, v]) => v)}::float8[]) as u(t, v)
      where r.service_id = ${hugeService} and r.metric = 'load'
    `;
    const queries = createServiceQueries(db, { staleAfterSeconds: 300 });
    const read = (step: '1m' | '1h') =>
      queries.readMetricSeries({
        orgId: huge,
        serviceId: hugeService,
        metric: 'load',
        step,
        from: new Date(hourStart),
        to: new Date(hourStart + hourMs),
        // Raw samples are read at most an hour back: these are within it.
      });
    // Before any refresh the newest buckets come from raw samples: no overflow there either.
    const rawMinutes = await read('1m');
    expect(rawMinutes?.map((p) => [p.avg, p.min, p.max, p.count])).toEqual([
      [rollupValueBound, rollupValueBound, rollupValueBound, 2],
      [-rollupValueBound, -rollupValueBound, -rollupValueBound, 1],
      [rollupValueBound / 2, 0, rollupValueBound, 2],
    ]);

    // samples_1m and samples_1h are retired (migrations 36 and 37): a refresh materializes
    // nothing, minutes and hours are computed from the raw samples, clamped alike.
    const result = await refreshRollups(db, { now });
    expect(result).toMatchObject({ refreshed: [], setAside: [] });
    expect(await rollupRows('samples_1m', hugeService)).toEqual([]);
    expect(await rollupRows('samples_1h', hugeService)).toEqual([]);
    expect((await read('1m'))?.map((p) => [p.avg, p.count])).toEqual(
      rawMinutes?.map((p) => [p.avg, p.count]),
    );
    expect((await read('1h'))?.map((p) => [p.min, p.max, p.count])).toEqual([[-1e100, 1e100, 5]]);
    const normalHour = await queries.readMetricSeries({
      orgId: normal,
      serviceId: await serviceOf(normal),
      metric: 'load',
      step: '1h',
      from: new Date(hourStart),
      to: new Date(hourStart + hourMs),
    });
    expect(normalHour?.map((p) => [p.avg, p.min, p.max, p.count])).toEqual([[2, 1, 3, 2]]);
  });

  describe('when one organization’s data makes the statement fail (before migration 37)', () => {
    const broken = uniqueOrgId();
    const healthy = uniqueOrgId();
    let brokenService: string;
    let db: Database;
    let dispose: () => Promise<void>;

    beforeAll(async () => {
      // samples_1h is still refreshed there.
      ({ db, dispose } = await cleanDatabase('postgres', 'db_rollup_isolation_v36'));
      await migrateBefore(db, 37);
      const store = createSampleStore(db);
      await store.writeBatch({
        samples: [sample(broken, 'b', hourStart, 1), sample(healthy, 'ok', hourStart, 7)],
      });
      brokenService = await serviceOf(broken);
      // Any failure the data could cause; a trigger makes this organization's rows fail.
      await db.sql.unsafe(`
        create function refuse_broken_rollup() returns trigger language plpgsql as $$
        begin
          if new.series_id in (select id from series where service_id = '${brokenService}') then
            raise exception 'refusing series % for the test', new.series_id;
          end if;
          return new;
        end $$;
        create trigger refuse_broken before insert or update on samples_1h_materialized
          for each row execute function refuse_broken_rollup();
      `);
    });

    afterAll(async () => {
      await dispose?.();
    });

    const rollupRows = (table: 'samples_1h', serviceId: string) =>
      db.sql<{ bucket: Date; avg: number }[]>`
        select o.bucket, o.avg
        from ${db.sql(`${table}_materialized`)} o join series r on r.id = o.series_id
        where r.service_id = ${serviceId} and r.metric = 'load' order by o.bucket
      `;
    const serviceOf = async (orgId: string): Promise<string> => {
      const [row] = await db.sql<{ id: string }[]>`select id from services where org_id = ${orgId}`;
      return row!.id;
    };

    it('sets that organization aside, rolls up the others and moves the watermark', async () => {
      await db.sql`update rollup_watermarks set watermark = ${new Date(hourStart - minuteMs)}`;
      const later = new Date(now.getTime() + minuteMs);
      const result = await refreshRollups(db, { now: later });
      expect(result.setAside).toEqual([
        expect.objectContaining({
          rollup: 'samples_1h',
          orgId: broken,
          sqlState: 'P0001',
          message: expect.stringContaining('refusing') as string,
        }),
      ]);
      const healthyHours = await rollupRows('samples_1h', await serviceOf(healthy));
      expect(healthyHours.map((h) => [h.bucket.getTime(), h.avg])).toEqual([[hourStart, 7]]);
      expect(await rollupRows('samples_1h', brokenService)).toEqual([]);
      const [watermark] = await db.sql<{ watermark: Date }[]>`
        select watermark from rollup_watermarks where rollup = 'samples_1h'
      `;
      expect(watermark!.watermark.getTime()).toBe(Math.floor(later.getTime() / hourMs) * hourMs);
    });

    it('tells the maintenance observer, or rejects once its work is done when there is none', async () => {
      await db.sql`update rollup_watermarks set watermark = ${new Date(hourStart - minuteMs)}`;
      const told: RollupChunkSetAside[] = [];
      const options = { alertRetentionDays: 90, rawRetentionDays: 30, storageMoveBatchesPerRun: 4 };
      const result = await runMaintenance(db, now, {
        ...options,
        onRollupSetAside: (chunk) => told.push(chunk),
      });
      expect(told.map((chunk) => chunk.orgId)).toEqual([broken]);
      expect(result.rollups.setAside).toEqual(told);

      await db.sql`update rollup_watermarks set watermark = ${new Date(hourStart - minuteMs)}`;
      const error: unknown = await runMaintenance(db, now, options).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(RollupsSetAsideError);
      expect((error as RollupsSetAsideError).message).toContain(broken);
      const [watermark] = await db.sql<{ watermark: Date }[]>`
        select watermark from rollup_watermarks where rollup = 'samples_1h'
      `;
      expect(watermark!.watermark.getTime()).toBeGreaterThan(hourStart);
    });
  });
});
