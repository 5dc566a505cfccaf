// @services timescale
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceUrl } from './vitest-context.js';

const options = { max: 4, onnotice: () => undefined } as const;
// Unique per run, so reruns against a shared server (TIMESCALE_URL) do not collide.
const suffix = `${Date.now()}_${Math.floor(Math.random() * 1e6)}`;

describe('timescale service', () => {
  let sql: postgres.Sql;
  const table = `ts_smoke_${suffix}`;
  const view = `ts_smoke_1m_${suffix}`;

  beforeAll(() => {
    sql = postgres(serviceUrl('timescale'), options);
  });

  afterAll(async () => {
    await sql.unsafe(`drop materialized view if exists ${view}`);
    await sql.unsafe(`drop table if exists ${table}`);
    await sql.end({ timeout: 5 });
  });

  it('is a real PostgreSQL server with the timescaledb extension preloaded', async () => {
    const [row] = await sql<{ extversion: string; preload: string; version: string }[]>`
      select (select extversion from pg_extension where extname = 'timescaledb') as extversion,
        current_setting('shared_preload_libraries') as preload, version() as version`;
    expect(row!.extversion).toMatch(/^2\./);
    expect(row!.preload).toContain('timescaledb');
    expect(row!.version).toMatch(/^PostgreSQL 15\./);
  });

  it('runs a refresh policy by itself: its background worker materializes the aggregate', async () => {
    await sql.unsafe(`create table ${table} (
      time timestamptz not null,
      host text not null,
      value double precision not null
    )`);
    await sql.unsafe(`select create_hypertable('${table}', by_range('time', interval '1 day'))`);
    // Continuous aggregates cannot be created or refreshed inside a transaction block.
    await sql.unsafe(`create materialized view ${view}
      with (timescaledb.continuous, timescaledb.materialized_only = true) as
      select time_bucket(interval '1 minute', time) as bucket, host,
             avg(value) as avg, min(value) as min, max(value) as max, count(*) as samples
      from ${table}
      group by bucket, host
      with no data`);

    // Five complete minutes before the current one, three samples a minute: in minute m, host
    // a reports 10m, 10m+1, 10m+2 and host b the same plus 100.
    const start = Math.floor(Date.now() / 60_000) * 60_000 - 10 * 60_000;
    const samples = [];
    for (let minute = 0; minute < 5; minute++) {
      for (let i = 0; i < 3; i++) {
        const time = new Date(start + minute * 60_000 + i * 20_000);
        samples.push({ time, host: 'a', value: 10 * minute + i });
        samples.push({ time, host: 'b', value: 100 + 10 * minute + i });
      }
    }
    await sql`insert into ${sql(table)} ${sql(samples)}`;
    // Nobody refreshes it by hand: the scheduler runs the policy every second.
    const [job] = await sql<{ job: number }[]>`
      select add_continuous_aggregate_policy(${view}::regclass,
        start_offset => interval '1 hour', end_offset => interval '1 minute',
        schedule_interval => interval '1 second') as job`;

    let rows: {
      bucket: Date;
      host: string;
      avg: number;
      min: number;
      max: number;
      samples: number;
    }[] = [];
    for (let attempt = 0; attempt < 600 && rows.length < 10; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      rows = await sql`
        select bucket, host, avg, min, max, samples::int as samples
        from ${sql(view)} order by host, bucket`;
    }
    const expected = ['a', 'b'].flatMap((host) =>
      [0, 1, 2, 3, 4].map((minute) => {
        const base = (host === 'a' ? 0 : 100) + 10 * minute;
        return {
          bucket: new Date(start + minute * 60_000).toISOString(),
          host,
          avg: base + 1,
          min: base,
          max: base + 2,
          samples: 3,
        };
      }),
    );
    expect(rows.map((row) => ({ ...row, bucket: row.bucket.toISOString() }))).toEqual(expected);
    // The job's statistics are written after its refresh committed: wait for them too.
    const statsOf = () =>
      sql<{ successes: number; failures: number }[]>`
        select total_successes::int as successes, total_failures::int as failures
        from timescaledb_information.job_stats where job_id = ${job!.job}`;
    let [stats] = await statsOf();
    for (let attempt = 0; attempt < 300 && !(stats && stats.successes > 0); attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      [stats] = await statsOf();
    }
    expect(stats!.successes).toBeGreaterThan(0);
    expect(stats!.failures).toBe(0);
  });

  it('serves several connections at once (one stays in a transaction meanwhile)', async () => {
    const held = await sql.reserve();
    try {
      await held`begin`;
      const [mine] = await held<{ pid: number }[]>`select pg_backend_pid() as pid`;
      const [other] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
      expect(other!.pid).not.toBe(mine!.pid);
      await held`rollback`;
    } finally {
      held.release();
    }
  });
});

const execFileAsync = promisify(execFile);

/** The machine's psql (libpq), as a developer would paste the printed URL into it. */
function findPsql(): string {
  const dirs = [process.env['PG_BIN'], '/usr/lib/postgresql/15/bin'].filter(
    (dir): dir is string => dir !== undefined && dir !== '',
  );
  return dirs.map((dir) => join(dir, 'psql')).find((path) => existsSync(path)) ?? 'psql';
}

describe('timescale service with libpq clients', () => {
  it('serves psql on the URL exactly as printed', async () => {
    const { stdout } = await execFileAsync(
      findPsql(),
      [
        serviceUrl('timescale'),
        '--no-psqlrc',
        '-tAc',
        "select extversion from pg_extension where extname = 'timescaledb'",
      ],
      // No password prompt, ever: a test must fail rather than wait for a terminal.
      { env: { ...process.env, PGCONNECT_TIMEOUT: '10', PGPASSWORD: '' }, timeout: 30_000 },
    );
    expect(stdout.trim()).toMatch(/^2\./);
  });
});
