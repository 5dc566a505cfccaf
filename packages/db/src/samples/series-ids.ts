import type { TransactionSql } from '../core/database.js';

/**
 * A series as the writer names it: a service's metric, with labels of its own (written through
 * an agent protocol) or none (/ingest: the service's tags label it).
 */
export type SeriesName = {
  serviceId: string;
  metric: string;
  /** The series' labels as `seriesLabelsJson` writes them, or null for the service's tags. */
  labels: string | null;
};

/**
 * A series' own labels as JSON text, sorted by name: one text per label set, so that it keys the
 * writer's cache (storage compares them as jsonb, whatever the order).
 */
export function seriesLabelsJson(labels: Readonly<Record<string, string>>): string {
  const names = Object.keys(labels).sort();
  let json = '{';
  for (let i = 0; i < names.length; i++) {
    const name = names[i]!;
    json += `${i === 0 ? '' : ','}${JSON.stringify(name)}:${JSON.stringify(labels[name])}`;
  }
  return `${json}}`;
}

/**
 * The key of a series within its service, as the writer's cache holds it: the metric, plus its
 * labels when it has its own (a metric name holds no NUL).
 */
export function seriesKey(metric: string, labels: string | null): string {
  return labels === null ? metric : `${metric}\u0000${labels}`;
}

/** A concurrent creation can hide a series from one statement, never from the next two. */
const maxAttempts = 3;

/**
 * The id of each series of `names` (distinct), in the same order, creating the missing ones in
 * the caller's transaction. One statement reads the existing ids and inserts the rest (in one
 * order for everyone, so two transactions creating the same series cannot deadlock) with
 * ON CONFLICT DO NOTHING. A series that another transaction created after the statement's
 * snapshot is neither read nor inserted by it (the insert waited for that transaction to commit,
 * then skipped the row): the next statement, with a newer snapshot, reads it. Throws only if a
 * series vanishes every time (deleted as soon as created).
 */
export async function resolveSeriesIds(
  tx: TransactionSql,
  names: readonly SeriesName[],
): Promise<number[]> {
  const ids: (number | undefined)[] = new Array<number | undefined>(names.length).fill(undefined);
  let pending = names.map((_name, index) => index);
  for (let attempt = 0; attempt < maxAttempts && pending.length > 0; attempt++) {
    const serviceIds = pending.map((index) => names[index]?.serviceId ?? '');
    const metrics = pending.map((index) => names[index]?.metric ?? '');
    const labels = pending.map((index) => names[index]?.labels ?? null);
    // Labels are matched through the unique index's expression (migration 21): the md5 of
    // their jsonb text, '' for none.
    const rows = await tx<{ n: string; id: string }[]>`
      with wanted as (
        select w.service_id, w.metric, w.labels::jsonb as labels,
          coalesce(md5(w.labels::jsonb::text), '') as labels_key, w.n
        from unnest(${serviceIds}::text[], ${metrics}::text[], ${labels}::text[])
          with ordinality as w(service_id, metric, labels, n)
      ),
      found as (
        select w.n, s.id
        from wanted w join series s on s.service_id = w.service_id and s.metric = w.metric
          and coalesce(md5(s.labels::text), '') = w.labels_key
      ),
      created as (
        insert into series (service_id, metric, labels)
        select w.service_id, w.metric, w.labels from wanted w
        where not exists (select 1 from found f where f.n = w.n)
        order by w.service_id, w.metric, w.labels_key
        on conflict (service_id, metric, (coalesce(md5(labels::text), ''))) do nothing
        returning id, service_id, metric, coalesce(md5(labels::text), '') as labels_key
      )
      select n, id from found
      union all
      select w.n, c.id from created c
      join wanted w on w.service_id = c.service_id and w.metric = c.metric
        and w.labels_key = c.labels_key
    `;
    for (const row of rows) {
      const index = pending[Number(row.n) - 1];
      if (index !== undefined) ids[index] = Number(row.id);
    }
    pending = pending.filter((index) => ids[index] === undefined);
  }
  if (pending.length > 0) {
    const name = names[pending[0] ?? 0];
    throw new Error(
      `series ${name?.metric ?? '?'} of service ${name?.serviceId ?? '?'} was neither found nor ` +
        `created in ${maxAttempts} attempts (deleted each time as soon as created?)`,
    );
  }
  return ids as number[];
}
