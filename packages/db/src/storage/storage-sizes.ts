import type { Database } from '../core/database.js';

type Sql = Database['sql'];

/** One relation of our storage: a hypertable, an aggregate's materialization, a dictionary table. */
export type RelationSize = {
  /** The hypertable's or table's name; a continuous aggregate is named by its view. */
  name: string;
  kind: 'hypertable' | 'aggregate' | 'dictionary';
  tableBytes: number;
  indexBytes: number;
  toastBytes: number;
};

/** A hypertable's compression, as TimescaleDB's chunk_compression_stats counts it. */
type CompressionSizes = {
  name: string;
  compressedChunks: number;
  chunks: number;
  /** Of the compressed chunks, before and after. */
  beforeBytes: number;
  afterBytes: number;
};

export type StorageSizes = {
  relations: RelationSize[];
  compression: CompressionSizes[];
  /** pg_database_size: everything, the system catalogs and empty tables included. */
  databaseBytes: number;
};

/**
 * What our storage takes on disk in a TimescaleDB database, relation by relation: every
 * hypertable (raw samples and the continuous aggregates' materialization hypertables, their
 * compressed chunks included), the series dictionary, and the database as a whole.
 */
export async function measureTimescaleSizes(db: Database): Promise<StorageSizes> {
  const { sql } = db;
  const hypertables = await sql<
    {
      name: string;
      view: string | null;
      table_bytes: string;
      index_bytes: string;
      toast_bytes: string;
      total_bytes: string;
    }[]
  >`
    with hypertables as (${hypertableList(sql)})
    select h.name, h.view, d.table_bytes, d.index_bytes, d.toast_bytes, d.total_bytes
    from hypertables h
    cross join lateral hypertable_detailed_size(format('%I.%I', h.schema, h.name)::regclass) d
    order by 1
  `;
  const tables = await sql<
    { name: string; table_bytes: string; index_bytes: string; toast_bytes: string }[]
  >`
    select c.relname as name, pg_relation_size(c.oid) as table_bytes,
      pg_indexes_size(c.oid) as index_bytes,
      coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) as toast_bytes
    from pg_class c
    where c.relname in ('series', 'services') and c.relnamespace = current_schema()::regnamespace
    order by 1
  `;
  const relations: RelationSize[] = [
    ...hypertables.map((row) => ({
      name: row.view ?? row.name,
      kind: row.view === null ? ('hypertable' as const) : ('aggregate' as const),
      tableBytes: Number(row.table_bytes),
      indexBytes: Number(row.index_bytes),
      toastBytes: Number(row.toast_bytes),
    })),
    ...tables.map((row) => ({
      name: row.name,
      kind: 'dictionary' as const,
      tableBytes: Number(row.table_bytes),
      indexBytes: Number(row.index_bytes),
      toastBytes: Number(row.toast_bytes),
    })),
  ];
  const chunks = await sql<
    {
      hypertable: string;
      compressed: string;
      chunks: string;
      before_bytes: string | null;
      after_bytes: string | null;
    }[]
  >`
    with hypertables as (${hypertableList(sql)})
    select coalesce(h.view, h.name) as hypertable,
      count(*) filter (where s.compression_status = 'Compressed') as compressed,
      count(*) as chunks,
      sum(s.before_compression_total_bytes) as before_bytes,
      sum(s.after_compression_total_bytes) as after_bytes
    from hypertables h
    cross join lateral chunk_compression_stats(format('%I.%I', h.schema, h.name)::regclass) s
    group by 1
    order by 1
  `;
  return {
    relations,
    compression: chunks.map((row) => ({
      name: row.hypertable,
      compressedChunks: Number(row.compressed),
      chunks: Number(row.chunks),
      beforeBytes: Number(row.before_bytes ?? 0),
      afterBytes: Number(row.after_bytes ?? 0),
    })),
    databaseBytes: await databaseBytes(db),
  };
}

/**
 * Every hypertable of the schema: the user-facing ones and the continuous aggregates'
 * materialization hypertables (which timescaledb_information.hypertables leaves out), each with
 * the view it materializes (null for a plain hypertable).
 */
function hypertableList(sql: Sql) {
  return sql`
    select hypertable_schema as schema, hypertable_name as name, null::text as view
    from timescaledb_information.hypertables
    where hypertable_schema = current_schema()
    union all
    select materialization_hypertable_schema, materialization_hypertable_name, view_name::text
    from timescaledb_information.continuous_aggregates
    where view_schema = current_schema()
  `;
}

/**
 * The same relations in plain PostgreSQL storage: each partitioned table with all its
 * partitions (the DEFAULT one included), the rollup tables under the names of the views that
 * read them, the series dictionary. Nothing is compressed.
 */
export async function measurePlainSizes(db: Database): Promise<StorageSizes> {
  const rows = await db.sql<
    { name: string; table_bytes: string; index_bytes: string; toast_bytes: string }[]
  >`
    select t.name, sum(pg_relation_size(c.oid)) as table_bytes,
      sum(pg_indexes_size(c.oid)) as index_bytes,
      sum(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) as toast_bytes
    from unnest(array['samples', 'snapshots', 'stale_markers', 'unaggregated_samples', 'exemplars',
      'samples_1m_materialized', 'samples_1h_materialized', 'series', 'services']) as t(name)
    -- pg_partition_tree gives nothing for a table that is not partitioned: the table itself.
    cross join lateral (
      select relid from pg_partition_tree(t.name::regclass) union select t.name::regclass
    ) p
    join pg_class c on c.oid = p.relid
    group by t.name
    order by t.name
  `;
  const kindOf = (name: string): RelationSize['kind'] =>
    name.endsWith('_materialized')
      ? 'aggregate'
      : name === 'series' || name === 'services'
        ? 'dictionary'
        : 'hypertable';
  return {
    relations: rows.map((row) => ({
      name: row.name.replace(/_materialized$/, ''),
      kind: kindOf(row.name),
      tableBytes: Number(row.table_bytes),
      indexBytes: Number(row.index_bytes),
      toastBytes: Number(row.toast_bytes),
    })),
    compression: [],
    databaseBytes: await databaseBytes(db),
  };
}

async function databaseBytes(db: Database): Promise<number> {
  const [database] = await db.sql<{ bytes: string }[]>`
    select pg_database_size(current_database()) as bytes
  `;
  return Number(database?.bytes ?? 0);
}
