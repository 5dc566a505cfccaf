import type { Database } from '../core/database.js';

/**
 * Whether `samples` still has its unique `(series_id, time)` key: plain PostgreSQL keeps it,
 * TimescaleDB's head layout (migration 33, head-chunks.ts) drops it once no storage move needs it.
 */
export async function hasSampleKey(db: Database): Promise<boolean> {
  const [row] = await db.sql<{ found: boolean }[]>`
    select exists (select from pg_indexes
      where tablename = 'samples' and indexname = 'samples_series_id_time_key') as found`;
  return row?.found === true;
}
