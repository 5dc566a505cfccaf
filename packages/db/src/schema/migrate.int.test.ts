// @services postgres timescale
import { randomBytes } from 'node:crypto';
import { serviceUrl } from '@monitor/testkit/vitest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { createDatabase } from '../core/database.js';
import { cleanDatabase } from '../testing/clean-database.js';
import type { MigrateResult } from './migrate.js';
import { migrate } from './migrate.js';
import { migrations } from './migrations.js';

const allVersions = migrations.map((m) => m.version);
const hourMs = 60 * 60_000;
const dayMs = 24 * hourMs;

describe.each(['postgres', 'timescale'] as const)('migrate on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let migration: MigrateResult;
  const expectedMode = engine;
  // Engine-specific tests exist only for their engine instead of showing up as skipped.
  const onEngine = <T extends typeof it | typeof describe>(wanted: typeof engine, register: T): T =>
    (engine === wanted ? register : () => undefined) as T;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, 'db_migrate'));
    migration = await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  onEngine('postgres', it)(
    'applies each migration once when several processes migrate at once',
    async () => {
      const name = `db_storage_race_${randomBytes(4).toString('hex')}`;
      await db.sql`create database ${db.sql(name)}`;
      const url = new URL(serviceUrl(engine));
      url.pathname = `/${name}`;
      const starters = [0, 1, 2].map(() =>
        createDatabase({ url: url.toString(), maxConnections: 2 }),
      );
      try {
        const results = await Promise.all(starters.map((starter) => migrate(starter)));
        expect(
          results.flatMap((r) => r.applied.map((m) => m.version)).sort((a, b) => a - b),
        ).toEqual(allVersions);
        expect(new Set(results.map((r) => r.mode))).toEqual(new Set(['postgres']));
      } finally {
        await Promise.all(starters.map((starter) => starter.close()));
        await db.sql`drop database if exists ${db.sql(name)} with (force)`;
      }
    },
  );

  it('detects the storage mode and applies every migration once', async () => {
    expect(migration.mode).toBe(expectedMode);
    expect(migration.applied.map((m) => m.version)).toEqual(allVersions);
    const again = await migrate(db);
    expect(again).toMatchObject({ mode: expectedMode, applied: [], notes: [] });
    expect(again.engine.engineName).toBe(engine === 'timescale' ? 'timescaledb' : 'postgresql');
    expect(again.timescaledbVersion).toEqual(
      engine === 'timescale' ? expect.stringMatching(/^2\./) : undefined,
    );
    const rows = await db.sql`select version from schema_migrations order by version`;
    expect(rows.map((r) => r['version'] as number)).toEqual(allVersions);
    const [settings] = await db.sql`select mode, raw_retention_days from storage_settings`;
    expect(settings).toEqual({ mode: expectedMode, raw_retention_days: 30 });
  });

  onEngine('timescale', it)('keeps the storage jobs in line with the policies', async () => {
    await migrate(db, {
      rawRetentionDays: 10,
      snapshotRetentionDays: 3,
      rollup1mRetentionDays: 20,
      rollup1hRetentionDays: 40,
      compressAfterHours: 48,
    });
    const jobs = await db.sql<
      { proc_name: string; target: string; config: Record<string, unknown> }[]
    >`
      select j.proc_name, coalesce(c.view_name, j.hypertable_name) as target, j.config
      from timescaledb_information.jobs j
      left join timescaledb_information.continuous_aggregates c
        on c.materialization_hypertable_name = j.hypertable_name
      where j.hypertable_schema = 'public' or c.view_schema = 'public'
      order by 1, 2
    `;
    expect(
      jobs.map((j) => [
        j.proc_name,
        j.target,
        j.config['drop_after'] ?? j.config['compress_after'] ?? j.config['start_offset'],
      ]),
    ).toEqual([
      // The raw samples' time, and so the aggregates' buckets, are epoch milliseconds: their
      // jobs' offsets are too.
      ['policy_compression', 'samples', 48 * hourMs],
      // samples_1m and samples_1h, retired (migrations 36 and 37), are refreshed no more: what
      // they hold is compressed as before and dropped past their retention.
      ['policy_compression', 'samples_1h', 2 * hourMs],
      ['policy_compression', 'samples_1m', 239 * hourMs],
      ['policy_retention', 'exemplars', '7 days'],
      ['policy_retention', 'histogram_chunks', '10 days'],
      ['policy_retention', 'samples', 10 * dayMs],
      ['policy_retention', 'samples_1h', 40 * dayMs],
      ['policy_retention', 'samples_1m', 20 * dayMs],
      ['policy_retention', 'snapshots', '3 days'],
      ['policy_retention', 'stale_markers', '10 days'],
      ['policy_retention', 'unaggregated_samples', '10 days'],
    ]);
    await migrate(db); // back to the defaults for the other tests
  });

  onEngine('timescale', describe)('hypertables', () => {
    it('makes samples, unaggregated samples, snapshots, staleness markers, exemplars, histogram chunks and the kept tiers hypertables and the rollups continuous aggregates', async () => {
      const rows = await db.sql`
        select hypertable_name from timescaledb_information.hypertables
        where hypertable_schema = 'public' order by 1
      `;
      expect(rows.map((r) => r['hypertable_name'] as string)).toEqual([
        'exemplars',
        'histogram_chunks',
        'sample_tier_1h',
        'sample_tier_5m',
        'samples',
        'snapshots',
        'stale_markers',
        'unaggregated_samples',
      ]);
      const views = await db.sql`
        select view_name from timescaledb_information.continuous_aggregates order by 1
      `;
      expect(views.map((r) => r['view_name'] as string)).toEqual(['samples_1h', 'samples_1m']);
    });
  });
});
