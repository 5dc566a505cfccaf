// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { migrate } from '../schema/migrate.js';
import { cleanDatabase } from '../testing/clean-database.js';
import type { HostSample } from './sample-batch.js';
import { createSampleStore } from './sample-store.js';

const minuteMs = 60_000;

/**
 * The contract's rule for a sample at a timestamp already stored (docs/api.md): the first value
 * stands, the same point again is stored once, a different one is dropped and counted; late
 * samples are no duplicates. The store decides it itself (sample-dedup.ts), whatever writer
 * stored the first value.
 */
describe.each(['postgres', 'timescale'] as const)('the sample store on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, 'db_sample_duplicates'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  /** The stored values of the org's one host's `cpu`, by time. */
  const storedCpu = async (orgId: string): Promise<[number, number][]> => {
    const rows = await db.sql<{ time_ms: string; value: number }[]>`
      select r.time_ms, r.value
      from raw_samples((select array_agg(s.id) from series s join services v on v.id = s.service_id
        where v.org_id = ${orgId} and s.metric = 'cpu'), 0, 9e15::bigint) r
      union all
      select (extract(epoch from u.time) * 1000)::bigint, u.value
      from unaggregated_samples u join series s on s.id = u.series_id
      join services v on v.id = s.service_id
      where v.org_id = ${orgId} and s.metric = 'cpu'
      order by 1
    `;
    return rows.map((row) => [Number(row.time_ms), Number(row.value)]);
  };

  const at = (orgId: string, timeMs: number, cpu: number, offset?: number): HostSample =>
    buildHostSample({
      orgId,
      host: 'h',
      timeMs,
      metrics: { cpu },
      ...(offset === undefined ? {} : { position: { partition: 0, offset } }),
    });

  it('keeps the first value at a time and drops a different one, counted, in a batch and across batches', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 30 * minuteMs;
    expect(
      await store.writeBatch({ samples: [at(orgId, t0, 1), at(orgId, t0, 2), at(orgId, t0, 1)] }),
    ).toMatchObject({ samplesWritten: 1, duplicatesSkipped: 2, differentValuesDropped: 1 });
    expect(
      await store.writeBatch({ samples: [at(orgId, t0, 3), at(orgId, t0 + 1000, Number.NaN)] }),
    ).toMatchObject({ samplesWritten: 1, duplicatesSkipped: 1, differentValuesDropped: 1 });
    // NaN is NaN again; an infinity at a time a finite value holds is a different value.
    expect(
      await store.writeBatch({
        samples: [at(orgId, t0 + 1000, Number.NaN), at(orgId, t0, Number.POSITIVE_INFINITY)],
      }),
    ).toMatchObject({ samplesWritten: 0, duplicatesSkipped: 2, differentValuesDropped: 1 });
    expect(await storedCpu(orgId)).toEqual([
      [t0, 1],
      [t0 + 1000, Number.NaN],
    ]);
  });

  it('keeps the first value across a restart of the writer and a partition that another writer wrote meanwhile', async () => {
    const orgId = uniqueOrgId();
    const owner = { groupId: 'writer', topic: `duplicates-${engine}-${orgId}` };
    const t0 = Date.now() - 20 * minuteMs;
    const first = createSampleStore(db);
    await first.writeBatch({ samples: [at(orgId, t0, 1, 0)] }, owner);
    // Another writer owns the partition for a while (a rebalance) and stores a newer sample.
    const other = createSampleStore(db);
    await other.writeBatch({ samples: [at(orgId, t0 + 15_000, 2, 1)] }, owner);
    // The first writer gets the partition back; an agent resends the other's sample with
    // another value. Its memory says t0 is the series' newest: it must not trust it.
    expect(
      await first.writeBatch({ samples: [at(orgId, t0 + 15_000, 9, 2)] }, owner),
    ).toMatchObject({ samplesWritten: 0, differentValuesDropped: 1 });
    // A new process (a restart) knows nothing of the series.
    const restarted = createSampleStore(db);
    expect(
      await restarted.writeBatch(
        { samples: [at(orgId, t0, 7, 3), at(orgId, t0 + 30_000, 3, 4)] },
        owner,
      ),
    ).toMatchObject({ samplesWritten: 1, duplicatesSkipped: 1, differentValuesDropped: 1 });
    expect(await storedCpu(orgId)).toEqual([
      [t0, 1],
      [t0 + 15_000, 2],
      [t0 + 30_000, 3],
    ]);
  });

  it('bounds what a database stored before migration 32 by its newest sample', async () => {
    const { db: old, dispose: disposeOld } = await cleanDatabase(engine, 'db_sample_bounds');
    try {
      await migrate(old);
      const orgId = uniqueOrgId();
      const t0 = Date.now() - 50 * minuteMs;
      await createSampleStore(old).writeBatch({
        samples: [at(orgId, t0, 1), at(orgId, t0 + 15_000, Number.POSITIVE_INFINITY)],
      });
      // As the database stood before migration 32.
      await old.sql`drop table sample_newest_bounds`;
      await old.sql`alter table consumer_offsets drop column newest_time_ms`;
      await old.sql`delete from schema_migrations where version = 32`;
      await migrate(old);
      const [bound] = await old.sql<
        { ms: string }[]
      >`select newest_time_ms as ms from sample_newest_bounds`;
      expect(Number(bound?.ms)).toBe(t0 + 15_000);
      // A writer that starts on it looks the resent point up rather than store it twice.
      const owner = { groupId: 'writer', topic: `bounds-${engine}` };
      expect(
        await createSampleStore(old).writeBatch({ samples: [at(orgId, t0, 2, 0)] }, owner),
      ).toMatchObject({ samplesWritten: 0, differentValuesDropped: 1 });
    } finally {
      await disposeOld();
    }
  });

  it('stores late samples, older than their series’ newest, that no point holds yet', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 40 * minuteMs;
    await store.writeBatch({ samples: [at(orgId, t0 + 60_000, 2)] });
    expect(
      await store.writeBatch({ samples: [at(orgId, t0, 1), at(orgId, t0 + 30_000, 1.5)] }),
    ).toMatchObject({ samplesWritten: 2, duplicatesSkipped: 0 });
    expect(
      await createSampleStore(db).writeBatch({ samples: [at(orgId, t0 + 1, 0)] }),
    ).toMatchObject({ samplesWritten: 1, duplicatesSkipped: 0 });
    expect((await storedCpu(orgId)).map(([timeMs]) => timeMs - t0)).toEqual([0, 1, 30_000, 60_000]);
  });
});
