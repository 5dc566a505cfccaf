import type { Database } from '../core/database.js';

/** Bytes one column takes in the compressed chunks of a hypertable or aggregate. */
export type CompressedColumn = {
  relation: string;
  column: string;
  bytes: number;
  /** Rows the compressed chunks hold (the uncompressed row count). */
  rows: number;
};

/**
 * Where the bytes of `relation`'s compressed chunks go, column by column: the stored size of
 * each compressed datum (`pg_column_size`: after TOAST compression, wherever it is stored),
 * summed over every compressed chunk. Shows which column a setting would have to shrink.
 */
export async function measureCompressedColumns(
  db: Database,
  relation: string,
): Promise<CompressedColumn[]> {
  const { sql } = db;
  const chunks = await sql<{ chunk: string }[]>`
    select format('%I.%I', cc.schema_name, cc.table_name) as chunk
    from _timescaledb_catalog.chunk c
    join _timescaledb_catalog.chunk cc on cc.id = c.compressed_chunk_id
    join _timescaledb_catalog.hypertable h on h.id = c.hypertable_id
    where format('%I.%I', h.schema_name, h.table_name)::regclass = (
      select coalesce(
        (select format('%I.%I', materialization_hypertable_schema,
            materialization_hypertable_name)::regclass
          from timescaledb_information.continuous_aggregates
          where view_schema = current_schema() and view_name = ${relation}),
        ${relation}::regclass))
  `;
  const totals = new Map<string, number>();
  let rows = 0;
  for (const { chunk } of chunks) {
    const columns = await sql<{ name: string }[]>`
      select attname as name from pg_attribute
      where attrelid = ${chunk}::regclass and attnum > 0 and not attisdropped
      order by attnum
    `;
    // Identifiers from the catalog, quoted by format() above and quote_ident here.
    const sums = columns
      .map(
        (c) => `coalesce(sum(pg_column_size(${quoteIdent(c.name)})), 0) as ${quoteIdent(c.name)}`,
      )
      .join(', ');
    const [row] = await sql.unsafe<Record<string, string>[]>(
      `select ${sums}, coalesce(sum(_ts_meta_count), 0) as ${quoteIdent('rows')} from ${chunk}`,
    );
    for (const c of columns)
      totals.set(c.name, (totals.get(c.name) ?? 0) + Number(row?.[c.name] ?? 0));
    rows += Number(row?.['rows'] ?? 0);
  }
  return [...totals].map(([column, bytes]) => ({ relation, column, bytes, rows }));
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
