import type { Database } from '../core/database.js';

/** The database's side of one history read: its plan and timing, as `explain analyze` gives it. */
export type HistoryExplain = {
  step: '1m' | '1h';
  /** Execution time the server reports, for one series over the whole history. */
  executionMs: number;
  planningMs: number;
  plan: string[];
};

/**
 * `explain (analyze, buffers)` of the statement the history endpoint runs on TimescaleDB (the
 * read function of the step's aggregate, one series, the whole range; service-queries.ts), so
 * a benchmark can split a request's latency between the database and the API process.
 */
export async function explainHistoryRead(
  db: Database,
  read: { step: '1m' | '1h'; seriesId: string; from: Date; to: Date },
): Promise<HistoryExplain> {
  const buckets = read.step === '1m' ? db.sql`samples_1m_buckets` : db.sql`samples_1h_buckets`;
  // Twice on one connection, the second reported: the api's pooled connections have their
  // catalog caches warm, which a first plan in a session fills (hundreds of buffer hits).
  const rows = await db.sql.begin(async (sql) => {
    const explain = () => sql<{ 'QUERY PLAN': string }[]>`
      explain (analyze, buffers)
      select timestamptz 'epoch' + bucket_ms * interval '1 millisecond' as time, avg, min, max,
        count
      from ${buckets}(${[read.seriesId]}::bigint[], ${read.from.getTime()}::bigint,
        ${read.to.getTime()}::bigint)
      order by bucket_ms
    `;
    await explain();
    return await explain();
  });
  const plan = rows.map((row) => row['QUERY PLAN']);
  const timing = (label: string): number =>
    Number(new RegExp(`${label} Time: ([\\d.]+) ms`).exec(plan.join('\n'))?.[1] ?? Number.NaN);
  return {
    step: read.step,
    executionMs: timing('Execution'),
    planningMs: timing('Planning'),
    plan,
  };
}
