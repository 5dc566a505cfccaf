import { scaledCode, scaledValue } from '../scaled-code.js';
import { epochMs, timestamp } from '../sql-time.js';

/**
 * What every reader of stored samples reads, on plain PostgreSQL (../timescale/read-functions.ts
 * states their contract): the same functions as on TimescaleDB, over this engine's tables,
 * whose times stay timestamptz (nothing is compressed here, so milliseconds as integers would
 * save nothing).
 */

const rawSamplesFunction = `create or replace function raw_samples(
    series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (series_id bigint, time_ms bigint, value double precision)
  language sql stable
  as $$ select s.series_id, ${epochMs('s.time')}, sample_value(s.mantissa, s.scale, s.value)
    from samples s
    where s.series_id = any(series_ids)
      and s.time >= ${timestamp('from_ms')} and s.time <= ${timestamp('to_ms')} $$`;

/** `raw_scaled_samples` (see ../timescale/read-functions.ts), times as epoch milliseconds. */
export const rawScaledSamplesFunction = `create or replace function raw_scaled_samples(
    series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (series_id bigint, time_ms bigint, scaled bigint, value double precision)
  language sql stable
  as $$ select s.series_id, ${epochMs('s.time')}, ${scaledCode('s')}, ${scaledValue('s')}
    from samples s
    where s.series_id = any(series_ids)
      and s.time >= ${timestamp('from_ms')} and s.time <= ${timestamp('to_ms')} $$`;

const bucketsFunction = (rollup: 'samples_1m' | 'samples_1h'): string =>
  `create or replace function ${rollup}_buckets(series_ids bigint[], from_ms bigint, to_ms bigint)
  returns table (bucket_ms bigint, series_id bigint, avg double precision,
    min double precision, max double precision, count bigint, sum double precision)
  language sql stable
  as $$ select ${epochMs('b.bucket')}, b.series_id, b.avg, b.min, b.max, b.count, b.sum
    from ${rollup} b
    where b.series_id = any(series_ids)
      and b.bucket >= ${timestamp('from_ms')} and b.bucket < ${timestamp('to_ms')} $$`;

/** Every read function of plain PostgreSQL storage. */
export const readFunctions: readonly string[] = [
  rawSamplesFunction,
  rawScaledSamplesFunction,
  bucketsFunction('samples_1m'),
  bucketsFunction('samples_1h'),
];
