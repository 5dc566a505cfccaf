import { newId } from '@monitor/platform';
import type { Queryable, TransactionSql } from '../core/database.js';
import { projectionJson } from './projection-json.js';
import type { HostSample, ServiceSummary } from './sample-batch.js';
import { checkSample, ServiceMap } from './sample-batch.js';

const newServiceId = (): string => newId('svc');

/** A service as the batch read or created it. */
export type StoredService = {
  id: string;
  /** Moves when a series of the service is deleted: part of the series cache's key. */
  seriesGeneration: number;
};

/**
 * The id of every service of the batch, from `known` (the rows read for the batch's hosts);
 * missing ones are inserted with the batch's projection (existing rows' projection is updated
 * after the samples' transaction, `projectServices`). A host that sent nothing but staleness
 * markers is not summarized and gets no service. Returns which were created by this call.
 */
export async function ensureServices(
  tx: TransactionSql,
  summaries: readonly ServiceSummary[],
  known: readonly ServiceIdRow[],
): Promise<{ ids: ServiceMap<StoredService>; created: number }> {
  const ids = new ServiceMap<StoredService>();
  let created = 0;
  const remember = (rows: readonly ServiceIdRow[]): void => {
    for (const row of rows) {
      ids.set(row.org_id, row.name, {
        id: row.id,
        seriesGeneration: Number(row.series_generation),
      });
    }
  };
  const missing = (): ServiceSummary[] =>
    summaries.filter((summary) => !ids.has(summary.orgId, summary.name));
  remember(known);
  const toCreate = missing();
  if (toCreate.length > 0) {
    // After the offsets were locked, which refuses a partition that moved: no fence here.
    const inserted = await insertNewServices(tx, toCreate, undefined);
    remember(inserted);
    created = inserted.length;
    // Created meanwhile by another transaction (the insert did nothing for it): read it now.
    const raced = missing();
    if (raced.length > 0) remember(await selectServiceIds(tx, raced));
  }
  return { ids, created };
}

/** `summaries` of `samples`, once every sample is checked as storable (InvalidSampleError). */
export function checkedSummaries(
  samples: readonly HostSample[],
  summaries: ServiceSummary[],
): ServiceSummary[] {
  for (const sample of samples) checkSample(sample);
  return summaries;
}

/** Each (org, host) of `samples` once. */
export function serviceNamesOf(samples: readonly HostSample[]): ServiceName[] {
  const names = new ServiceMap<ServiceName>();
  for (const sample of samples) {
    if (!names.has(sample.orgId, sample.host)) {
      names.set(sample.orgId, sample.host, { orgId: sample.orgId, name: sample.host });
    }
  }
  return [...names.values()];
}

/** A service as (org, host name). */
type ServiceName = Pick<ServiceSummary, 'orgId' | 'name'>;

type ServiceIdRow = { id: string; org_id: string; name: string; series_generation: string };

export async function selectServiceIds(
  tx: TransactionSql,
  summaries: readonly ServiceName[],
): Promise<ServiceIdRow[]> {
  return await tx<ServiceIdRow[]>`
    select s.id, s.org_id, s.name, s.series_generation
    from services s
    join unnest(${summaries.map((summary) => summary.orgId)}::text[],
                ${summaries.map((summary) => summary.name)}::text[]) as u(org_id, name)
      on s.org_id = u.org_id and s.name = u.name
  `;
}

/**
 * The writer offsets rows of a batch's partitions: a partition that moved to another shard
 * (`moved_to`, `monitor shards move`) gets no new service here, where a writer with an old map
 * would leave one nothing stores samples of.
 */
export type ProjectionFence = { groupId: string; topic: string; partitions: readonly number[] };

async function insertNewServices(
  tx: Queryable,
  summaries: readonly ServiceSummary[],
  fence: ProjectionFence | undefined,
): Promise<ServiceIdRow[]> {
  const unfenced =
    fence === undefined || fence.partitions.length === 0
      ? tx``
      : tx`where not exists (select from consumer_offsets c
          where c.group_id = ${fence.groupId} and c.topic = ${fence.topic}
            and c.partition = any(${[...fence.partitions]}::int[]) and c.moved_to is not null)`;
  return await tx<ServiceIdRow[]>`
    insert into services as s (id, org_id, name, tags, metrics, metric_times, last_seen)
    select id, org_id, name, tags, metrics, metric_times,
      timestamptz 'epoch' + last_seen_ms * interval '1 millisecond'
    from jsonb_to_recordset(${projectionJson(summaries, newServiceId)}::text::jsonb) as u(
      id text, org_id text, name text, tags jsonb, metrics jsonb, metric_times jsonb,
      last_seen_ms bigint
    )
    ${unfenced}
    order by org_id, name
    on conflict (org_id, name) do nothing
    returning id, org_id, name, series_generation
  `;
}

/**
 * The projection of every service of `summaries`: last_seen only moves forward; tags come from
 * a sample at least as new as last_seen; each metric's latest value is replaced only by a
 * strictly newer sample of that metric (metric_times holds the time of each value). Existing
 * rows are updated without an id drawn for each (they almost all exist: the samples'
 * transaction creates the new ones); the services no row was found for are inserted, and those
 * another transaction created meanwhile are updated after it.
 *
 * The per-metric merge costs about as much as the rest of the statement, so it has a fast path:
 * when all of a service's metrics in the batch share the batch's newest time (every sample
 * carried the same metrics) and that time is after last_seen, every one of them is newer than
 * any stored value (last_seen is at least every stored metric time), so a plain `||` merges
 * them. Services whose metrics have different times go through statements without it.
 */
export async function projectServices(
  sql: Queryable,
  summaries: readonly ServiceSummary[],
  fence?: ProjectionFence,
): Promise<{ created: number }> {
  let created = 0;
  for (const [group, fastPath] of byMetricTimes(summaries)) {
    const missing = notIn(group, await updateServiceRows(sql, group, fastPath));
    if (missing.length === 0) continue;
    const inserted = await insertNewServices(sql, missing, fence);
    created += inserted.length;
    // Created meanwhile (by the samples' transaction, another writer or the evaluator; the
    // insert waited for it and did nothing): merged into as the others were.
    const raced = notIn(missing, inserted);
    if (raced.length > 0) await updateServiceRows(sql, raced, fastPath);
  }
  return { created };
}

/** The summaries of `summaries` that no row of `rows` is for. */
function notIn(
  summaries: readonly ServiceSummary[],
  rows: readonly { org_id: string; name: string }[],
): ServiceSummary[] {
  const found = new ServiceMap<true>();
  for (const row of rows) found.set(row.org_id, row.name, true);
  return summaries.filter((summary) => !found.has(summary.orgId, summary.name));
}

/** `summaries` split for the fast path (see `projectServices`): uniform metric times, then mixed. */
function byMetricTimes(
  summaries: readonly ServiceSummary[],
): [group: ServiceSummary[], fastPath: boolean][] {
  const uniform = summaries.filter((summary) => metricTimesAre(summary, summary.lastSeenMs));
  const mixed = summaries.filter((summary) => !metricTimesAre(summary, summary.lastSeenMs));
  const groups: [ServiceSummary[], boolean][] = [
    [uniform, true],
    [mixed, false],
  ];
  return groups.filter(([group]) => group.length > 0);
}

function metricTimesAre(summary: ServiceSummary, timeMs: number): boolean {
  for (const { timeMs: metricTimeMs } of summary.metrics.values()) {
    if (metricTimeMs !== timeMs) return false;
  }
  return true;
}

/** The services of `summaries` that have a row, updated; returns which had one. */
async function updateServiceRows(
  sql: Queryable,
  summaries: readonly ServiceSummary[],
  fastPath: boolean,
): Promise<{ org_id: string; name: string }[]> {
  const input = projectionJson(summaries, undefined);
  // `::text::jsonb`: a parameter typed jsonb would be JSON.stringify'd again by postgres.js.
  return await sql<{ org_id: string; name: string }[]>`
    update services as s set
      last_seen = greatest(s.last_seen, u.last_seen),
      -- At an equal time the later batch wins, as within a batch; it also fills in the row the
      -- evaluator creates, without tags, when an alert fires before the writer stored its sample.
      tags = case when u.last_seen >= s.last_seen then u.tags else s.tags end,
      metrics = case
        when ${fastPath}::boolean and u.last_seen > s.last_seen then s.metrics || u.metrics
        else s.metrics || coalesce((
          select jsonb_object_agg(t.key, u.metrics -> t.key)
          from jsonb_each(u.metric_times) as t(key, time_ms)
          where t.time_ms::bigint > coalesce((s.metric_times ->> t.key)::bigint, -9223372036854775808)
        ), '{}')
      end,
      metric_times = case
        when ${fastPath}::boolean and u.last_seen > s.last_seen then s.metric_times || u.metric_times
        else s.metric_times || coalesce((
          select jsonb_object_agg(t.key, t.time_ms)
          from jsonb_each(u.metric_times) as t(key, time_ms)
          where t.time_ms::bigint > coalesce((s.metric_times ->> t.key)::bigint, -9223372036854775808)
        ), '{}')
      end
    from (
      select org_id, name, tags, metrics, metric_times,
        timestamptz 'epoch' + last_seen_ms * interval '1 millisecond' as last_seen
      from jsonb_to_recordset(${input}::text::jsonb) as r(
        org_id text, name text, tags jsonb, metrics jsonb, metric_times jsonb, last_seen_ms bigint
      )
    ) as u
    where s.org_id = u.org_id and s.name = u.name
    returning s.org_id, s.name
  `;
}
