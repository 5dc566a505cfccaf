// @services postgres
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { migrate } from '../schema/migrate.js';
import { cleanDatabase } from '../testing/clean-database.js';
import type { HostSample } from './sample-batch.js';
import { createSampleStore } from './sample-store.js';
import { resolveSeriesIds } from './series-ids.js';

const minuteMs = 60_000;

function sample(
  orgId: string,
  host: string,
  timeMs: number,
  metrics: Record<string, number>,
): HostSample {
  return buildHostSample({ orgId, host, timeMs, metrics });
}

describe('series ids of the sample store', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  const t0 = Date.now() - 30 * minuteMs;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase('postgres', 'db_series_ids'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  /** The org's samples as (host, metric, time ms, value), read through series and services. */
  const stored = async (orgId: string) =>
    (
      await db.sql<{ host: string; metric: string; time: number; value: number }[]>`
        select v.name as host, r.metric, s.time_ms::float8 as time, s.value
        from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
        join series r on r.id = s.series_id join services v on v.id = r.service_id
        where v.org_id = ${orgId}
        order by s.time_ms, r.metric, v.name
      `
    ).map((row) => [row.host, row.metric, row.time, row.value]);

  const seriesOf = async (orgId: string) =>
    db.sql<{ id: string; metric: string }[]>`
      select r.id, r.metric from series r join services v on v.id = r.service_id
      where v.org_id = ${orgId} order by r.metric
    `;

  it('creates a series once when two writers race for it', async () => {
    const orgId = uniqueOrgId('org_series');
    const writers = [createSampleStore(db), createSampleStore(db)];
    await Promise.all(
      writers.map((writer, i) =>
        writer.writeBatch({ samples: [sample(orgId, 'race', t0 + i * 1000, { cpu: i })] }),
      ),
    );
    expect(await seriesOf(orgId)).toHaveLength(1);
    expect(await stored(orgId)).toEqual([
      ['race', 'cpu', t0, 0],
      ['race', 'cpu', t0 + 1000, 1],
    ]);
  });

  it('reads a series that another transaction created after its snapshot', async () => {
    const serviceId = `svc_race_${randomBytes(6).toString('hex')}`;
    await db.sql`insert into services (id, org_id, name, last_seen) values (${serviceId}, ${uniqueOrgId('org_series')}, 'r', now())`;
    const name = { serviceId, metric: 'cpu', labels: null };
    let releaseFirst: () => void = () => undefined;
    const firstMayCommit = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    let firstCreated: () => void = () => undefined;
    const created = new Promise<void>((resolve) => {
      firstCreated = resolve;
    });
    // The first transaction creates the series and holds it uncommitted while the second asks.
    const first = db.sql.begin(async (tx) => {
      const ids = await resolveSeriesIds(tx, [name]);
      firstCreated();
      await firstMayCommit;
      return ids;
    });
    await created;
    const second = db.sql.begin((tx) => resolveSeriesIds(tx, [name]));
    // Let the second one's insert wait on the first's uncommitted row before that commits.
    for (let i = 0; i < 100; i++) {
      const [row] = await db.sql<{ waiting: number }[]>`
        select count(*)::int as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock'
      `;
      if ((row?.waiting ?? 0) > 0) break;
      await sleep(20);
    }
    releaseFirst();
    const [firstIds, secondIds] = await Promise.all([first, second]);
    expect(secondIds).toEqual(firstIds);
  });

  it('looks an id up again after its series was deleted, instead of writing to it', async () => {
    const orgId = uniqueOrgId('org_series');
    const store = createSampleStore(db);
    await store.writeBatch({ samples: [sample(orgId, 'h', t0, { cpu: 1, mem: 2 })] });
    const [cpu] = (await seriesOf(orgId)).filter((series) => series.metric === 'cpu');
    // Deleting a series takes its samples out of every read; the cached id must not be reused.
    await db.sql`delete from series where id = ${cpu!.id}`;
    await store.writeBatch({ samples: [sample(orgId, 'h', t0 + 1000, { cpu: 3, mem: 4 })] });
    const after = await seriesOf(orgId);
    expect(after.map((series) => series.metric)).toEqual(['cpu', 'mem']);
    expect(after[0]!.id).not.toBe(cpu!.id);
    expect(await stored(orgId)).toEqual([
      ['h', 'mem', t0, 2],
      ['h', 'cpu', t0 + 1000, 3],
      ['h', 'mem', t0 + 1000, 4],
    ]);
  });

  it('drops a deleted service’s series; its host comes back as a new service', async () => {
    const orgId = uniqueOrgId('org_series');
    const store = createSampleStore(db);
    await store.writeBatch({ samples: [sample(orgId, 'gone', t0, { cpu: 1 })] });
    const [before] = await db.sql<
      { id: string }[]
    >`select id from services where org_id = ${orgId}`;
    await db.sql`delete from services where id = ${before!.id}`;
    const [orphans] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from series where service_id = ${before!.id}
    `;
    expect(orphans?.n).toBe(0);
    const again = await store.writeBatch({
      samples: [sample(orgId, 'gone', t0 + 1000, { cpu: 2 })],
    });
    expect(again).toMatchObject({ samplesWritten: 1, servicesCreated: 1 });
    expect(await stored(orgId)).toEqual([['gone', 'cpu', t0 + 1000, 2]]);
  });

  it('never caches the id of a series whose transaction rolled back', async () => {
    const orgId = uniqueOrgId('org_series');
    const store = createSampleStore(db);
    await store.writeBatch({ samples: [sample(orgId, 'h', t0, { cpu: 1 })] });
    // The batch creates series `disk`, then fails on its snapshot: nothing of it stays.
    await expect(
      store.writeBatch({
        samples: [
          { ...sample(orgId, 'h', t0 + 1000, { disk: 5 }), containers: { json: '[1,,2]' } },
        ],
      }),
    ).rejects.toMatchObject({ code: '22P02' });
    expect((await seriesOf(orgId)).map((series) => series.metric)).toEqual(['cpu']);
    await store.writeBatch({ samples: [sample(orgId, 'h', t0 + 2000, { disk: 6 })] });
    expect(await stored(orgId)).toEqual([
      ['h', 'cpu', t0, 1],
      ['h', 'disk', t0 + 2000, 6],
    ]);
  });

  it('stores every sample with a cache far smaller than the series it writes', async () => {
    const orgId = uniqueOrgId('org_series');
    const store = createSampleStore(db, { seriesCacheEntries: 2 });
    const metrics = { a: 1, b: 2, c: 3, d: 4, e: 5 };
    for (const round of [0, 1, 2]) {
      await store.writeBatch({
        samples: [sample(orgId, 'x', t0 + round * 1000, metrics), sample(orgId, 'y', t0, metrics)],
      });
    }
    expect(await seriesOf(orgId)).toHaveLength(10);
    expect(await stored(orgId)).toHaveLength(4 * 5);
  });
});
