import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BackupSource } from '@monitor/testkit';
import { startBackupSource } from '@monitor/testkit';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migrate } from '../schema/migrate.js';
import { defaultOrganizationId } from '../orgs/org-store.js';
import type { Database } from './database.js';
import { createDatabase } from './database.js';

const minuteMs = 60_000;
const hosts = 20;
const minutes = 6 * 60;

/** `url` (a server's, on database `postgres`) on database `monitor`. */
function onMonitor(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = '/monitor';
  return parsed.toString();
}

/** What must come back from a backup: each relation's rows (count and checksum), and the catalog. */
async function fingerprint(db: Database) {
  const [samples] = await db.sql<{ rows: number; checksum: string }[]>`
    select count(*)::int as rows,
      md5(string_agg(series_id || '@' || time || '=' || sample_value(mantissa, scale, value),
        ',' order by series_id, time)) as checksum
    from samples`;
  // Through the read functions, as readers see them (samples_1m's minutes are computed from
  // the raw samples since migration 36).
  const rollup = async (name: 'samples_1m' | 'samples_1h') => {
    const [row] = await db.sql<{ rows: number; checksum: string }[]>`
      select count(*)::int as rows,
        md5(string_agg(r::text, ',' order by r.series_id, r.bucket_ms)) as checksum
      from ${db.sql(`${name}_buckets`)}(array(select id from series), 0, 253402300800000) r`;
    return row;
  };
  const [compressed] = await db.sql<{ chunks: number }[]>`
    select count(*)::int as chunks from timescaledb_information.chunks
    where hypertable_name = 'samples' and is_compressed`;
  const hypertables = await db.sql<{ name: string; compression: boolean }[]>`
    select hypertable_name as name, compression_enabled as compression
    from timescaledb_information.hypertables order by 1`;
  const aggregates = await db.sql<{ name: string }[]>`
    select view_name as name from timescaledb_information.continuous_aggregates order by 1`;
  const jobs = await db.sql<{ proc: string; hypertable: string | null; scheduled: boolean }[]>`
    select proc_name as proc, hypertable_name as hypertable, scheduled
    from timescaledb_information.jobs order by job_id`;
  return {
    samples,
    samples1m: await rollup('samples_1m'),
    samples1h: await rollup('samples_1h'),
    compressedChunks: compressed?.chunks,
    hypertables: [...hypertables],
    aggregates: aggregates.map((row) => row.name),
    jobs: [...jobs],
  };
}

/**
 * The backup procedure of docs/database-ha.md (issue 42, item 6), tested once: a
 * `pg_basebackup` of a running TimescaleDB primary holding the monitor's schema with data
 * (hypertables, compressed chunks, continuous aggregates, their jobs), verified, restored into
 * a new data directory and started, reads back the same rows; what was written after the backup
 * is not in it.
 */
describe('a base backup of a running TimescaleDB primary', () => {
  let source: BackupSource;
  let db: Database;
  let restoredDb: Database | undefined;

  beforeAll(async () => {
    source = await startBackupSource({ timescale: true });
    const admin = createDatabase({ url: source.url, maxConnections: 1 });
    await admin.sql`create database monitor`;
    await admin.close();
    db = createDatabase({ url: onMonitor(source.url), maxConnections: 4 });
    await migrate(db);
    // The test compresses and refreshes by hand: the jobs (every 15 minutes, at once after
    // they are made) must not race it.
    await db.sql`
      select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
      where hypertable_schema = current_schema()`;
  }, 120_000);

  afterAll(async () => {
    await restoredDb?.close({ timeoutSeconds: 1 });
    await db?.close({ timeoutSeconds: 1 });
    await source?.stop();
  });

  it('restores into a new data directory with the same samples, compressed chunks and aggregates', async () => {
    // Six hours of a sample a minute, two days back: old enough to compress and aggregate.
    const startMs = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 86_400_000;
    const store = createSampleStore(db);
    for (let minute = 0; minute < minutes; minute += 60) {
      const batch: HostSample[] = [];
      for (let m = minute; m < minute + 60; m++) {
        for (let h = 0; h < hosts; h++) {
          batch.push({
            orgId: defaultOrganizationId,
            host: `backup-${h}`,
            timeMs: startMs + m * minuteMs,
            // Integers: every sum is exact, whatever order a scan adds them in.
            metrics: { cpu: (m * 7 + h) % 100, load: h, mem: m % 50 },
            tags: {},
            containers: [],
            processes: [],
          });
        }
      }
      await store.writeBatch({ samples: batch });
    }
    const [compressed] = await db.sql<{ n: number }[]>`
      select count(compress_chunk(c, if_not_compressed => true))::int as n
      from show_chunks('samples', older_than => ${Date.now() - 24 * 60 * minuteMs}::bigint) c`;
    expect(compressed?.n).toBeGreaterThan(0);
    await refreshRollups(db, { now: new Date() });

    const before = await fingerprint(db);
    expect(before.samples?.rows).toBe(hosts * minutes * 3);
    for (const relation of [before.samples, before.samples1m, before.samples1h])
      expect(relation?.checksum).toMatch(/^[0-9a-f]{32}$/);
    expect(before.compressedChunks).toBeGreaterThan(0);
    expect(before.aggregates).toEqual(expect.arrayContaining(['samples_1m', 'samples_1h']));
    expect(before.samples1h?.rows).toBe(hosts * 3 * 6);

    const backup = await source.baseBackup();
    await backup.verify();
    // After the backup: not in it.
    await store.writeBatch({
      samples: [
        {
          orgId: defaultOrganizationId,
          host: 'after-backup',
          timeMs: Date.now(),
          metrics: { cpu: 1 },
          tags: {},
          containers: [],
          processes: [],
        },
      ],
    });

    const restored = await backup.restore();
    restoredDb = createDatabase({
      url: onMonitor(restored.url),
      maxConnections: 2,
    });
    const [state] = await restoredDb.sql<{ recovery: boolean }[]>`
      select pg_is_in_recovery() as recovery`;
    expect(state?.recovery).toBe(false);
    expect(await fingerprint(restoredDb)).toEqual(before);
    const [after] = await restoredDb.sql<{ n: number }[]>`
      select count(*)::int as n from services where name = 'after-backup'`;
    expect(after?.n).toBe(0);
  }, 240_000);
});
