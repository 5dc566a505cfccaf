import type { Fragment } from '@monitor/postgres-driver';
import type { Queryable } from './database.js';

/**
 * One page of `table`'s rows matching `filters`, newest first (ids sort by creation time), and
 * the total that match, in one statement: the total rides on every row, and on the one null row
 * of a page past the end.
 */
export async function pageNewestFirst<Row extends { id: string }>(
  sql: Queryable,
  page: { table: string; columns: string; filters: Fragment; limit: number; offset: number },
): Promise<{ rows: Row[]; total: number }> {
  const rows = await sql<(Partial<Row> & { total: string })[]>`
    select t.total, p.*
    from (select count(*) as total from ${sql(page.table)} where ${page.filters}) t
    left join lateral (
      select ${sql.unsafe(page.columns)} from ${sql(page.table)}
      where ${page.filters}
      order by id desc
      limit ${page.limit} offset ${page.offset}
    ) p on true
    order by p.id desc
  `;
  return {
    rows: rows.filter((row) => row.id !== null && row.id !== undefined) as unknown as Row[],
    total: Number(rows[0]?.total ?? 0),
  };
}
