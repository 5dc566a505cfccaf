// @services postgres
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/database.js';
import type { HostSample } from '../../samples/sample-batch.js';
import { createSampleStore } from '../../samples/sample-store.js';
import { migrate } from '../../schema/migrate.js';
import { cleanDatabase } from '../../testing/clean-database.js';
import { partitionName } from './partition-plan.js';
import { ensurePartitions } from './partitions.js';

const dayMs = 24 * 60 * 60_000;
/** The default retention the partition tests expect (migrate's defaults). */
const retention = { rawRetentionDays: 30, snapshotRetentionDays: 7, exemplarRetentionDays: 7 };

function sample(
  overrides: Partial<HostSample> & Pick<HostSample, 'orgId' | 'host' | 'timeMs'>,
): HostSample {
  return buildHostSample({ metrics: { cpu_usage: 50, memory_usage: 60 }, ...overrides });
}

describe('the daily partitions of plain PostgreSQL', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase('postgres', 'db_partitions'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  const partitionsOf = async (table: string): Promise<string[]> =>
    (
      await db.sql<{ name: string }[]>`
        select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent = ${table}::regclass order by 1
      `
    ).map((r) => r.name);

  it('creates daily partitions from the retention cutoff to a few days ahead', async () => {
    const now = new Date();
    const samples = await partitionsOf('samples');
    expect(samples).toContain('samples_default');
    expect(samples).toContain(partitionName('samples', now));
    expect(samples).toContain(partitionName('samples', new Date(now.getTime() + 3 * dayMs)));
    expect(samples).toContain(partitionName('samples', new Date(now.getTime() - 29 * dayMs)));
    expect(samples).not.toContain(partitionName('samples', new Date(now.getTime() - 31 * dayMs)));
    const snapshots = await partitionsOf('snapshots');
    expect(snapshots).toContain(partitionName('snapshots', new Date(now.getTime() - 6 * dayMs)));
    expect(snapshots).not.toContain(
      partitionName('snapshots', new Date(now.getTime() - 8 * dayMs)),
    );
    // Staleness markers end series of the raw samples: kept as long.
    const markers = await partitionsOf('stale_markers');
    expect(markers).toContain('stale_markers_default');
    expect(markers).toContain(partitionName('stale_markers', new Date(now.getTime() - 29 * dayMs)));
    expect(markers).not.toContain(
      partitionName('stale_markers', new Date(now.getTime() - 31 * dayMs)),
    );
    // Unaggregated samples are raw samples: kept as long.
    const unaggregated = await partitionsOf('unaggregated_samples');
    expect(unaggregated).toContain('unaggregated_samples_default');
    expect(unaggregated).toContain(
      partitionName('unaggregated_samples', new Date(now.getTime() - 29 * dayMs)),
    );
    expect(unaggregated).not.toContain(
      partitionName('unaggregated_samples', new Date(now.getTime() - 31 * dayMs)),
    );
    // Exemplars have a retention of their own (EXEMPLAR_RETENTION_DAYS, 7 by default).
    const exemplars = await partitionsOf('exemplars');
    expect(exemplars).toContain('exemplars_default');
    expect(exemplars).toContain(partitionName('exemplars', new Date(now.getTime() - 6 * dayMs)));
    expect(exemplars).not.toContain(
      partitionName('exemplars', new Date(now.getTime() - 8 * dayMs)),
    );
    // Native histograms' chunks are raw samples too.
    const histograms = await partitionsOf('histogram_chunks');
    expect(histograms).toContain(
      partitionName('histogram_chunks', new Date(now.getTime() - 29 * dayMs)),
    );
    expect(histograms).not.toContain(
      partitionName('histogram_chunks', new Date(now.getTime() - 31 * dayMs)),
    );
  });

  it('keeps a sample outside every partition in the default partition, then moves it out', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const farMs = Date.now() + 5 * dayMs; // partitions exist up to 3 days ahead
    await store.writeBatch({
      samples: [sample({ orgId, host: 'far', timeMs: farMs, metrics: { x: 1 } })],
    });
    const where = async (): Promise<string[]> =>
      (
        await db.sql`
          select s.tableoid::regclass::text as part
          from samples s join series r on r.id = s.series_id join services v on v.id = r.service_id
          where v.org_id = ${orgId}
        `
      ).map((r) => r['part'] as string);
    expect(await where()).toEqual(['samples_default']);

    const result = await ensurePartitions(db, { now: new Date(farMs - 2 * dayMs), ...retention });
    expect(result.dropped).toContain(partitionName('samples', new Date(Date.now() - 30 * dayMs)));
    expect(result.created).toContain(partitionName('samples', new Date(farMs)));
    expect(result.rowsMovedFromDefault).toBe(1);
    expect(await where()).toEqual([partitionName('samples', new Date(farMs))]);
  });

  it('drops partitions past retention and purges expired rows of the default partition', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const oldMs = Date.now() - 45 * dayMs; // before every partition: lands in the default one
    await store.writeBatch({
      samples: [sample({ orgId, host: 'old', timeMs: oldMs, metrics: { x: 1 } })],
    });
    const oldest = partitionName('samples', new Date(Date.now() - 26 * dayMs));
    const later = new Date(Date.now() + 5 * dayMs);
    const result = await ensurePartitions(db, { now: later, ...retention });
    expect(result.dropped).toContain(oldest);
    expect(result.rowsPurgedFromDefault).toBeGreaterThanOrEqual(1);
    expect(await partitionsOf('samples')).not.toContain(oldest);
    expect(await partitionsOf('samples')).toContain(
      partitionName('samples', new Date(later.getTime() + 3 * dayMs)),
    );
    // Idempotent.
    const again = await ensurePartitions(db, { now: later, ...retention });
    expect(again).toEqual({
      created: [],
      dropped: [],
      rowsMovedFromDefault: 0,
      rowsPurgedFromDefault: 0,
    });
  });
});
