import type { Database } from '../core/database.js';
import { servicesPageStatement } from '../services/service-queries.js';

/**
 * `explain (analyze, buffers)` of the services list query (no status filter, no tag filter):
 * the very statement `listServices` runs, with its text, one plan line an entry.
 */
export async function explainServicesPage(
  db: Database,
  call: { orgId: string; limit: number; offset: number; now: Date; staleAfterSeconds: number },
): Promise<{ statement: string; plan: string[] }> {
  const { sql } = db;
  const staleBefore = new Date(call.now.getTime() - call.staleAfterSeconds * 1000);
  const explained = await sql<Record<string, unknown>[]>`
    explain (analyze, buffers) ${servicesPageStatement(sql, call, staleBefore)}
  `;
  return {
    statement: explained.statement.string.replace(/\s+/g, ' ').trim(),
    plan: explained.map((row) => String(row['QUERY PLAN'])),
  };
}
