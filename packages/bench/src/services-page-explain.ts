import type { Database } from '@monitor/db';
import { createServiceQueries } from '@monitor/db';
import type { ExplainFigures } from './api-report.js';

/**
 * `explain (analyze, buffers)` of the services list query (no status filter, no tag filter).
 * The statement is a copy of the one `createServiceQueries().listServices` builds in
 * packages/db/src/service-queries.ts, whose fragments postgres.js assembles at run time; the
 * copy is checked against the real call (same page for the same arguments) so a change there
 * shows up here as `matchesListServices: false`.
 */
export async function explainServicesPage(
  db: Database,
  call: { orgId: string; limit: number; offset: number; now: Date; staleAfterSeconds: number },
): Promise<ExplainFigures> {
  const { sql } = db;
  const staleBefore = new Date(call.now.getTime() - call.staleAfterSeconds * 1000);
  const page = (explain: boolean) => sql<Record<string, unknown>[]>`
    ${explain ? sql`explain (analyze, buffers)` : sql``}
    select t.total, p.id, p.name, p.status, p.last_seen, p.metrics, p.tags
    from (select count(*) as total from services s where s.org_id = ${call.orgId}) t
    left join lateral (
      select s.id, s.name, s.last_seen, s.metrics, s.tags,
        case
          when a.level = 2 then 'critical'
          when a.level = 1 then 'warning'
          when s.last_seen < ${staleBefore} then 'stale'
          else 'healthy'
        end as status
      from (
        select id, name, last_seen, metrics, tags from services s
        where s.org_id = ${call.orgId}
        order by s.name, s.id
        limit ${call.limit} offset ${call.offset}
      ) s
      left join lateral (
        select max(case severity when 'critical' then 2 when 'warning' then 1 else 0 end) as level
        from alerts
        where service_id = s.id and status = 'active'
      ) a on true
    ) p on true
    order by p.name, p.id
  `;

  const copied = (await page(false)).map((row) => row['id']);
  const real = await createServiceQueries(db, {
    staleAfterSeconds: call.staleAfterSeconds,
  }).listServices({
    orgId: call.orgId,
    limit: call.limit,
    offset: call.offset,
    now: call.now,
  });
  const explained = await page(true);
  const plan = explained.map((row) => String(row['QUERY PLAN']));
  return {
    call: `listServices(limit ${call.limit}, offset ${call.offset})`,
    statement: explained.statement.string.replace(/\s+/g, ' ').trim(),
    plan,
    ...readPlan(plan, call.limit),
    matchesListServices:
      copied.length === real.services.length &&
      real.services.every((service, i) => service.id === copied[i]),
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
    orderFromIndex: indexes.has('services_org_id_name_key') && !fullSort,
  };
}
