import type { TransactionSql } from '../core/database.js';

/** A series as the writer names it: a service's metric. */
export type SeriesName = { serviceId: string; metric: string };

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
    const rows = await tx<{ n: string; id: string }[]>`
      with wanted as (
        select w.service_id, w.metric, w.n
        from unnest(${serviceIds}::text[], ${metrics}::text[]) with ordinality as w(service_id, metric, n)
      ),
      found as (
        select w.n, s.id
        from wanted w join series s on s.service_id = w.service_id and s.metric = w.metric
      ),
      created as (
        insert into series (service_id, metric)
        select w.service_id, w.metric from wanted w
        where not exists (select 1 from found f where f.n = w.n)
        order by w.service_id, w.metric
        on conflict (service_id, metric) do nothing
        returning id, service_id, metric
      )
      select n, id from found
      union all
      select w.n, c.id from created c
      join wanted w on w.service_id = c.service_id and w.metric = c.metric
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
