// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migrate } from '../schema/migrate.js';
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

  it('aggregates samples per minute and per hour', async () => {
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

    const load = db.sql`array(select id from series where service_id = ${serviceId} and metric = 'load')`;
    const minutes = await db.sql`
      select bucket_ms, avg, min, max, count, sum
      from samples_1m_buckets(${load}, ${hourStart}, ${hourStart + hourMs})
      order by bucket_ms
    `;
    expect(
      minutes.map((m) => [
        Number(m['bucket_ms']) - hourStart,
        m['avg'] as number,
        m['min'] as number,
        m['max'] as number,
        Number(m['count']),
      ]),
    ).toEqual([
      [0, 2, 1, 3, 3],
      [minuteMs, 10, 10, 10, 1],
      [59 * minuteMs, 100, 100, 100, 1],
    ]);
    const hours = await db.sql`
      select bucket_ms, avg, min, max, count, sum
      from samples_1h_buckets(${load}, ${hourStart}, ${hourStart + hourMs})
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

    // A late sample inside the lookback is counted by the next refresh.
    await store.writeBatch({
      samples: [sample({ orgId, host: 'agg', timeMs: hourStart + 30_000, metrics: { load: 4 } })],
    });
    await refreshRollups(db, { now: new Date(now.getTime() + minuteMs) });
    const [minute0] = await db.sql`
      select avg, count from samples_1m_buckets(${load}, ${hourStart}, ${hourStart + minuteMs})
    `;
    expect([minute0!['avg'], Number(minute0!['count'])]).toEqual([2.5, 4]);
  });
});
