// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migrate } from '../schema/migrate.js';
import { readMetricHistory } from '../services/metric-history.js';
import { materializationTable } from '../storage/timescale/tables.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { refreshRollups } from './run-maintenance.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;

function sample(
  overrides: Partial<HostSample> & Pick<HostSample, 'orgId' | 'host' | 'timeMs'>,
): HostSample {
  return buildHostSample({ metrics: { cpu_usage: 50, memory_usage: 60 }, ...overrides });
}

describe.each(['postgres', 'timescale'] as const)('refreshRollups on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, 'db_rollups'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('aggregates samples per minute and per hour from the raw samples, late ones at once, and materializes nothing', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const now = new Date();
    const hourStart = Math.floor(now.getTime() / hourMs) * hourMs - hourMs; // a complete hour
    // minute 0: 1, 2, 3; minute 1: 10; minute 59: 100
    const points: [number, number][] = [
      [hourStart, 1],
      [hourStart + 10_000, 2],
      [hourStart + 20_000, 3],
      [hourStart + minuteMs, 10],
      [hourStart + 59 * minuteMs + 30_000, 100],
    ];
    await store.writeBatch({
      samples: points.map(([timeMs, value]) =>
        sample({ orgId, host: 'agg', timeMs, metrics: { load: value } }),
      ),
    });
    await refreshRollups(db, { now });
    const [service] = await db.sql`select id from services where org_id = ${orgId}`;
    const serviceId = service!['id'] as string;

    const load = (
      await db.sql<{ id: string }[]>`
        select id::text from series where service_id = ${serviceId} and metric = 'load'`
    ).map((row) => row.id);
    // Minutes and hours since migrations 36 and 37 retired samples_1m and samples_1h: from the
    // raw samples as they are read.
    const minutes = await readMetricHistory(
      db.sql,
      { step: '1m', fromMs: hourStart, toMs: hourStart + hourMs },
      load,
    );
    expect(minutes.map((m) => [m.timeMs - hourStart, m.avg, m.min, m.max, m.count])).toEqual([
      [0, 2, 1, 3, 3],
      [minuteMs, 10, 10, 10, 1],
      [59 * minuteMs, 100, 100, 100, 1],
    ]);
    const hours = await db.sql`
      select bucket_ms, avg, min, max, count, sum
      from samples_1h_buckets(${load}::bigint[], ${hourStart}, ${hourStart + hourMs})
    `;
    expect(
      hours.map((h) => [
        Number(h['bucket_ms']),
        h['avg'] as number,
        h['min'] as number,
        h['max'] as number,
        Number(h['count']),
        h['sum'] as number,
      ]),
    ).toEqual([[hourStart, 116 / 5, 1, 100, 5, 116]]);
    expect(await materializedHours(load)).toEqual([]);

    // A late sample counts as soon as it is stored, with no refresh.
    await store.writeBatch({
      samples: [sample({ orgId, host: 'agg', timeMs: hourStart + 30_000, metrics: { load: 4 } })],
    });
    const [minute0] = await readMetricHistory(
      db.sql,
      { step: '1m', fromMs: hourStart, toMs: hourStart + minuteMs },
      load,
    );
    expect([minute0!.avg, minute0!.count]).toEqual([2.5, 4]);
    const [hour] = await readMetricHistory(
      db.sql,
      { step: '1h', fromMs: hourStart, toMs: hourStart + hourMs },
      load,
    );
    expect([hour!.avg, hour!.count]).toEqual([120 / 6, 6]);
    await refreshRollups(db, { now: new Date(now.getTime() + hourMs) });
    expect(await materializedHours(load)).toEqual([]);
  });

  /** The hours samples_1h materialized for these series (not computed as read). */
  async function materializedHours(ids: string[]): Promise<number[]> {
    const table =
      engine === 'postgres'
        ? 'samples_1h_materialized'
        : await materializationTable(db.sql, 'samples_1h');
    const rows = await db.sql.unsafe<{ bucket: Date | string }[]>(
      `select bucket from ${table} where series_id = any($1::bigint[])`,
      [ids],
    );
    return rows.map((row) =>
      row.bucket instanceof Date ? row.bucket.getTime() : Number(row.bucket),
    );
  }
});
