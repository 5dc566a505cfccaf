import { randomBytes } from 'node:crypto';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database } from '../core/database.js';
import { createDatabase } from '../core/database.js';

export type StorageEngine = 'postgres' | 'timescale';

/**
 * A clean database for one integration suite, not yet migrated.
 * - PostgreSQL (and a TimescaleDB server): a fresh database, dropped by `dispose`.
 * - The PGlite TimescaleDB engine has one database and serves one connection at a time; it
 *   cannot drop and re-create the timescaledb extension in its single session. So every table,
 *   sequence, function and continuous aggregate in `public` is dropped instead (keeping the
 *   extension's). Integration
 *   files run one at a time, so nothing else uses the engine meanwhile.
 */
export async function cleanDatabase(
  engine: StorageEngine,
  prefix: string,
): Promise<{ db: Database; dispose(): Promise<void> }> {
  const url = serviceUrl(engine);
  const admin = createDatabase({ url, maxConnections: 1, applicationName: `${prefix}-test` });
  const [row] = await admin.sql<{ version: string }[]>`select version()`;
  if (/emscripten/i.test(row?.version ?? '')) {
    // The engine's session starts with search_path = pg_catalog; its one session is shared by
    // every client, so setting it once holds for the suite.
    await admin.sql`set search_path to "$user", public`;
    const caggs = await admin.sql<{ name: string }[]>`
      select view_name as name from timescaledb_information.continuous_aggregates
      where view_schema = 'public' order by view_name desc
    `;
    for (const { name } of caggs)
      await admin.sql`drop materialized view if exists ${admin.sql(name)} cascade`;
    const tables = await admin.sql<{ name: string }[]>`
      select tablename as name from pg_tables where schemaname = 'public'
    `;
    for (const { name } of tables) await admin.sql`drop table if exists ${admin.sql(name)} cascade`;
    const sequences = await admin.sql<{ name: string }[]>`
      select sequence_name as name from information_schema.sequences
      where sequence_schema = 'public'
    `;
    for (const { name } of sequences)
      await admin.sql`drop sequence if exists ${admin.sql(name)} cascade`;
    // Our trigger functions; not the extension's, some of which live in public too.
    const functions = await admin.sql<{ signature: string }[]>`
      select p.oid::regprocedure::text as signature
      from pg_proc p join pg_namespace n on n.oid = p.pronamespace
      where n.nspname = 'public'
        and not exists (select 1 from pg_depend d where d.objid = p.oid and d.deptype = 'e')
    `;
    for (const { signature } of functions)
      await admin.sql.unsafe(`drop function if exists ${signature} cascade`);
    return { db: admin, dispose: () => admin.close() };
  }
  const name = `${prefix}_${engine}_${randomBytes(4).toString('hex')}`;
  await admin.sql`create database ${admin.sql(name)}`;
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  const db = createDatabase({ url: testUrl.toString(), maxConnections: 4 });
  return {
    db,
    async dispose() {
      await db.close();
      await admin.sql`drop database if exists ${admin.sql(name)} with (force)`;
      await admin.close();
    },
  };
}
