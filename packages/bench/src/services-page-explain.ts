import type { Database } from '@monitor/db';
import { explainServicesPage as explainStatement } from '@monitor/db/bench';
import type { ExplainFigures } from './api-report.js';

/**
 * `explain (analyze, buffers)` of the services list query (no status filter, no tag filter):
 * the very statement `listServices` runs, from `servicesPageStatement`.
 */
export async function explainServicesPage(
  db: Database,
  call: { orgId: string; limit: number; offset: number; now: Date; staleAfterSeconds: number },
): Promise<ExplainFigures> {
  const { statement, plan } = await explainStatement(db, call);
  return {
    call: `listServices(limit ${call.limit}, offset ${call.offset})`,
    statement,
    plan,
    ...readPlan(plan, call.limit),
  };
}

/**
 * Which indexes a text-format plan reads, and whether the services come out of
 * `services_org_id_name_key` in order: an Incremental Sort on top of it (the id tie-break) is
 * fine, a Sort that emits more rows than one page is not (it sorted the organization).
 */
export function readPlan(
  plan: readonly string[],
  pageRows: number,
): { indexes: string[]; orderFromIndex: boolean } {
  const indexes = new Set<string>();
  let fullSort = false;
  for (const line of plan) {
    for (const match of line.matchAll(/\busing (\S+) on\b/g)) {
      if (match[1] !== undefined) indexes.add(match[1]);
    }
    if (/(?:^|->)\s*Sort\s+\(/.test(line)) {
      const actualRows = /\(actual time=[\d.]+\.\.[\d.]+ rows=(\d+)/.exec(line)?.[1];
      if (actualRows === undefined || Number(actualRows) > pageRows) fullSort = true;
    }
  }
  return {
    indexes: [...indexes],
    orderFromIndex:
      (indexes.has('services_org_id_name_id_idx') || indexes.has('services_org_id_name_key')) &&
      !fullSort,
  };
}
