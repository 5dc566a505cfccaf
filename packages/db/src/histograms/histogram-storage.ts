import type { Database } from '../core/database.js';

/** What the native histograms take on disk (TimescaleDB), for the histogram benchmark. */
export type HistogramStorage = {
  /** The compacted chunks' bytes, as stored (after PostgreSQL's compression). */
  chunkBytes: number;
  chunkRows: number;
  /** `histogram_chunks` whole: rows, TOAST, index, and space left to reuse. */
  tableBytes: number;
  toastBytes: number;
  indexBytes: number;
  /** `histogram_samples` whole, and the histograms in it (as written, not compacted yet). */
  newestBytes: number;
  newestHistograms: number;
};

export async function measureHistogramStorage(db: Database): Promise<HistogramStorage> {
  const [row] = await db.sql<HistogramStorage[]>`
    select
      (select coalesce(sum(pg_column_size(chunk)), 0)::float8 from histogram_chunks)
        as "chunkBytes",
      (select count(*)::int from histogram_chunks) as "chunkRows",
      d.total_bytes::float8 as "tableBytes",
      d.toast_bytes::float8 as "toastBytes",
      d.index_bytes::float8 as "indexBytes",
      pg_total_relation_size('histogram_samples')::float8 as "newestBytes",
      (select count(*)::int from histogram_samples) as "newestHistograms"
    from hypertable_detailed_size('histogram_chunks') d
  `;
  return row!;
}
