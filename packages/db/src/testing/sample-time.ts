import type { Fragment } from '@monitor/postgres-driver';
import type { Database } from '../core/database.js';

/**
 * For tests that write or read `samples` rows with SQL of their own: `samples.time` is epoch
 * milliseconds (bigint) on TimescaleDB since migration 24, timestamptz on plain PostgreSQL.
 * `toColumn(t)` turns a timestamptz expression into the column's type, `fromColumn(c)` the
 * column back into a timestamptz.
 */
export async function sampleTimeColumn(db: Database): Promise<{
  toColumn(timestamptz: Fragment): Fragment;
  fromColumn(column: Fragment): Fragment;
}> {
  const [column] = await db.sql<{ integer: boolean }[]>`
    select format_type(a.atttypid, null) = 'bigint' as integer
    from pg_attribute a where a.attrelid = 'samples'::regclass and a.attname = 'time'`;
  const { sql } = db;
  return column?.integer === true
    ? {
        toColumn: (t) => sql`(extract(epoch from ${t}) * 1000)::bigint`,
        fromColumn: (c) => sql`(timestamptz 'epoch' + ${c} * interval '1 millisecond')`,
      }
    : { toColumn: (t) => t, fromColumn: (c) => c };
}
