// @services postgres
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRestartablePostgres } from './postgres.js';
import { serviceUrl } from './vitest-context.js';

describe('postgres service', () => {
  let sql: postgres.Sql;
  // Unique per run, so reruns against a shared server (DATABASE_URL) do not collide.
  const table = `testkit_smoke_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;

  beforeAll(() => {
    sql = postgres(serviceUrl('postgres'), { max: 2, onnotice: () => undefined });
  });

  afterAll(async () => {
    await sql`drop table if exists ${sql(table)}`;
    await sql.end({ timeout: 5 });
  });

  it('runs PostgreSQL 15 or later', async () => {
    const [row] = await sql<{ server_version_num: string }[]>`show server_version_num`;
    expect(Number(row!.server_version_num)).toBeGreaterThanOrEqual(150_000);
  });

  it('keeps what a committed transaction wrote', async () => {
    await sql.begin(async (tx) => {
      await tx`create table ${sql(table)} (id int primary key, name text not null)`;
      await tx`insert into ${sql(table)} ${sql([
        { id: 1, name: 'alpha' },
        { id: 2, name: 'beta' },
      ])}`;
    });

    const rows = await sql<
      { id: number; name: string }[]
    >`select id, name from ${sql(table)} order by id`;
    expect(rows.map((row) => ({ ...row }))).toEqual([
      { id: 1, name: 'alpha' },
      { id: 2, name: 'beta' },
    ]);
  });

  it('leaves nothing behind after a rolled-back transaction', async () => {
    const rolledBack = `${table}_rolled_back`;
    await expect(
      sql.begin(async (tx) => {
        await tx`create table ${sql(rolledBack)} (id int)`;
        await tx`insert into ${sql(table)} (id, name) values (3, 'gamma')`;
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');

    const [count] = await sql<
      { n: number }[]
    >`select count(*)::int as n from ${sql(table)} where id = 3`;
    expect(count!.n).toBe(0);
    const [exists] = await sql<{ t: string | null }[]>`select to_regclass(${rolledBack}) as t`;
    expect(exists!.t).toBeNull();
  });
});

describe('restartable postgres', () => {
  it('keeps committed rows across a stop and a start on the same URL', async () => {
    const server = await startRestartablePostgres();
    const sql = postgres(server.url, { max: 1, onnotice: () => undefined });
    try {
      await sql`create table kept (id int primary key)`;
      await sql`insert into kept values (1), (2)`;
      await server.stop();
      await expect(sql`select 1`).rejects.toThrow();
      await server.start();
      const rows = await sql<{ id: number }[]>`select id from kept order by id`;
      expect(rows.map((row) => row.id)).toEqual([1, 2]);
    } finally {
      await sql.end({ timeout: 1 });
      await server.destroy();
    }
  });
});
