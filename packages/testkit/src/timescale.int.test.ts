// @services timescale
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceUrl } from './vitest-context.js';

/**
 * The native TimescaleDB (PGlite + pglite-socket) serves one connection at a time, hence `max: 1`
 * and a silent `onnotice` (PGlite logs at DEBUG level), and one client open at a time: each
 * `describe` opens its own and ends it. It runs no background workers, so the test refreshes the
 * continuous aggregate itself, as every test against it must.
 */
const options = { max: 1, onnotice: () => undefined } as const;
// Unique per run, so reruns against a shared server (TIMESCALE_URL) do not collide.
const suffix = `${Date.now()}_${Math.floor(Math.random() * 1e6)}`;

describe('timescale service', () => {
  let sql: postgres.Sql;
  const table = `ts_smoke_${suffix}`;
  const view = `ts_smoke_1m_${suffix}`;
  const start = Date.parse('2024-03-01T12:00:00Z');

  beforeAll(() => {
    sql = postgres(serviceUrl('timescale'), options);
  });

  afterAll(async () => {
    await sql.unsafe(`drop materialized view if exists ${view}`);
    await sql.unsafe(`drop table if exists ${table}`);
    await sql.end({ timeout: 5 });
  });

  it('has the timescaledb extension', async () => {
    const rows = await sql<{ extversion: string }[]>`
      select extversion from pg_extension where extname = 'timescaledb'`;
    expect(rows[0]?.extversion).toMatch(/^2\./);
  });

  it('rolls samples of a hypertable up into 1-minute buckets of a continuous aggregate', async () => {
    await sql.unsafe(`create table ${table} (
      time timestamptz not null,
      host text not null,
      value double precision not null
    )`);
    await sql.unsafe(`select create_hypertable('${table}', by_range('time', interval '1 day'))`);
    // Continuous aggregates cannot be created or refreshed inside a transaction block.
    await sql.unsafe(`create materialized view ${view}
      with (timescaledb.continuous) as
      select time_bucket(interval '1 minute', time) as bucket, host,
             avg(value) as avg, min(value) as min, max(value) as max, count(*) as samples
      from ${table}
      group by bucket, host
      with no data`);

    // Five minutes, three samples a minute (at :00, :20, :40): in minute m, host a reports
    // 10m, 10m+1, 10m+2 and host b the same plus 100.
    const samples = [];
    for (let minute = 0; minute < 5; minute++) {
      for (let i = 0; i < 3; i++) {
        const time = new Date(start + minute * 60_000 + i * 20_000);
        samples.push({ time, host: 'a', value: 10 * minute + i });
        samples.push({ time, host: 'b', value: 100 + 10 * minute + i });
      }
    }
    await sql`insert into ${sql(table)} ${sql(samples)}`;

    await sql.unsafe(
      `call refresh_continuous_aggregate('${view}', '2024-03-01T11:00:00Z'::timestamptz, '2024-03-01T13:00:00Z'::timestamptz)`,
    );

    const rows = await sql<
      { bucket: Date; host: string; avg: number; min: number; max: number; samples: number }[]
    >`
      select bucket, host, avg, min, max, samples::int as samples
      from ${sql(view)}
      order by host, bucket`;
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
  });
});

describe('timescale service connections', () => {
  const table = `ts_smoke_conn_${suffix}`;
  const connect = (): postgres.Sql => postgres(serviceUrl('timescale'), options);

  afterAll(async () => {
    const sql = connect();
    await sql.unsafe(`drop table if exists ${table}`);
    await sql.end({ timeout: 5 });
  });

  it('takes a statement larger than one TCP read (~64 KB)', async () => {
    const sql = connect();
    try {
      await sql.unsafe(
        `create table ${table} (time timestamptz not null, host text, value float8)`,
      );
      const rows = Array.from({ length: 3_000 }, (_, i) => ({
        time: new Date(Date.UTC(2024, 0, 1) + i * 1_000),
        host: `host-${i % 7}`,
        value: i,
      }));
      await sql`insert into ${sql(table)} ${sql(rows)}`;
      const [count] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(table)}`;
      expect(count!.n).toBe(3_000);
    } finally {
      await sql.end({ timeout: 5 });
    }
  });

  it('starts each connection without the transaction and settings of the one before', async () => {
    const first = connect();
    const reserved = await first.reserve();
    await reserved.unsafe('begin');
    await reserved.unsafe(`insert into ${table} values ('2030-01-01', 'uncommitted', 1)`);
    await reserved.unsafe(`set application_name = 'left-behind'`);
    reserved.release();
    await first.end({ timeout: 5 });

    const second = connect();
    try {
      const [row] = await second<{ uncommitted: number; app: string }[]>`
        select (select count(*)::int from ${second(table)} where host = 'uncommitted') as uncommitted,
               current_setting('application_name') as app`;
      expect(row!.uncommitted).toBe(0);
      expect(row!.app).not.toBe('left-behind');
    } finally {
      await second.end({ timeout: 5 });
    }
  });

  it('refuses what would crash PGlite with an error, and keeps serving', async (context) => {
    const sql = connect();
    try {
      const [server] = await sql<{ version: string }[]>`select version()`;
      if (!/emscripten/i.test(server!.version)) context.skip('a real server takes both statements');

      await expect(sql`copy ${sql(table)} from stdin`.writable()).rejects.toThrow(
        /COPY FROM STDIN is not supported by PGlite/,
      );
      const values = Array.from({ length: 33_000 }, (_, i) => `$${i + 1}::int`).join(' + ');
      await expect(
        sql.unsafe(
          `select ${values} as total`,
          Array.from({ length: 33_000 }, () => 1),
        ),
      ).rejects.toThrow(/33000 bind parameters: PGlite takes at most 32767/);
      const [alive] = await sql<{ one: number }[]>`select 1 as one`;
      expect(alive!.one).toBe(1);
    } finally {
      await sql.end({ timeout: 5 });
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

/** Sends one untyped 8-byte request (length, code) and resolves with the first byte answered. */
function negotiate(url: string, code: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(port), hostname);
    const request = Buffer.alloc(8);
    request.writeInt32BE(8, 0);
    request.writeInt32BE(code, 4);
    socket.once('connect', () => socket.write(request));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString('latin1', 0, 1));
    });
    socket.once('error', reject);
  });
}

describe('timescale service with libpq clients', () => {
  const psql = findPsql();
  const runPsql = (url: string, sql: string) =>
    execFileAsync(psql, [url, '--no-psqlrc', '-tAc', sql], {
      // No password prompt, ever: a test must fail rather than wait for a terminal.
      env: { ...process.env, PGCONNECT_TIMEOUT: '10', PGPASSWORD: '' },
      timeout: 30_000,
    });

  it('answers SSL and GSS encryption requests with N (no encryption, go on in plain text)', async () => {
    expect(await negotiate(serviceUrl('timescale'), 80_877_103)).toBe('N');
    expect(await negotiate(serviceUrl('timescale'), 80_877_104)).toBe('N');
  });

  it('serves psql on the URL exactly as printed', async () => {
    const { stdout } = await runPsql(
      serviceUrl('timescale'),
      "select extversion from pg_extension where extname = 'timescaledb'",
    );
    expect(stdout.trim()).toMatch(/^2\./);
  });

  it('keeps serving after a client that demanded TLS gave up', async (context) => {
    const sql = postgres(serviceUrl('timescale'), options);
    const [server] = await sql<{ version: string }[]>`select version()`;
    await sql.end({ timeout: 5 });
    if (!/emscripten/i.test(server!.version)) context.skip('a container may offer TLS');

    const url = new URL(serviceUrl('timescale'));
    url.searchParams.set('sslmode', 'require');
    await expect(runPsql(url.href, 'select 1')).rejects.toThrow(/does not support SSL/);
    const { stdout } = await runPsql(serviceUrl('timescale'), 'select 41 + 1');
    expect(stdout.trim()).toBe('42');
  });
});
