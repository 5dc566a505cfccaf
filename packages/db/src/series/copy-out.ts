import { finished } from 'node:stream/promises';
import type { Sql } from '../core/database.js';
import { cancelable } from './cancelable.js';
import type { CopyRow } from './copy-binary-reader.js';
import { createCopyBinaryReader } from './copy-binary-reader.js';

/**
 * Settings for the transaction of a read's COPY: PostgreSQL compiles (JIT) the expressions and
 * the tuple deforming of a statement estimated past 40,000, without inlining or optimizing,
 * which cost more to compile than they saved. The default threshold, 100,000, left a PromQL read
 * of 250 series × 6 h (estimated ~56,000, 360,000 rows) interpreted: compiled, it took 88 ms of
 * the server's time against 100 (docs/benchmarks/promql.md, "PromQL"). Below ~120,000 rows the compile
 * (~6 ms) costs more than it saves, hence a threshold at about twice that. A server with JIT off
 * stays so.
 */
const bulkReadJit = `select set_config('jit_above_cost', '40000', true),
  set_config('jit_inline_above_cost', '-1', true),
  set_config('jit_optimize_above_cost', '-1', true)`;

/**
 * Stored series ids as an SQL array literal for a COPY's statement, which takes no parameters:
 * each checked to be one of our bigints, so nothing else reaches the SQL.
 */
export function seriesIdArray(ids: readonly string[]): string {
  for (const id of ids) if (!/^[0-9]+$/.test(id)) throw new Error(`not a series id: ${id}`);
  return `'{${ids.join(',')}}'::bigint[]`;
}

/**
 * Runs `select` as `copy (…) to stdout (format binary)` and hands each row to `onRow` as it
 * arrives, while the server is still sending the next ones: a bytea in a result row comes as hex
 * text (postgres.js asks for text results), twice the bytes, encoded by the server and decoded
 * here; COPY hands the bytes over as they are. COPY takes no parameters: `select` holds only
 * what the caller checked. On a connection of its own, in a transaction of its own, canceled
 * when `signal` aborts (see `cancelable`). With `parallelWorkers: false` the statement runs in
 * its own backend alone: for one of several side by side, each of which the planner would
 * otherwise hand workers that cost more to start than they save.
 */
export async function copyOut(
  sql: Sql,
  select: string,
  onRow: (row: CopyRow) => void,
  signal: AbortSignal,
  options: { parallelWorkers?: boolean } = {},
): Promise<void> {
  const reader = createCopyBinaryReader(onRow);
  // A connection of its own: the pool pipelines queries onto busy connections, and
  // postgres.js fails a query sent to one that is streaming a COPY (COPY_IN_PROGRESS).
  const connection = await sql.reserve();
  let inTransaction = false;
  try {
    await connection.unsafe('begin');
    inTransaction = true;
    await connection.unsafe(
      options.parallelWorkers === false
        ? `${bulkReadJit}, set_config('max_parallel_workers_per_gather', '0', true)`
        : bulkReadJit,
    );
    const query = connection.unsafe(`copy (${select}) to stdout (format binary)`);
    const copied = (async () => {
      const stream = await query.readable();
      // Chunks as they come ('data'), not as the async iterator reads them, which joins the
      // chunks waiting in the stream into one more copy. What the reader refuses fails the read
      // once the COPY has ended: a stream destroyed while the server sends leaves the
      // connection's socket paused (postgres.js pauses it when the stream refuses a chunk).
      let refused: Error | undefined;
      stream.on('data', (chunk: Buffer) => {
        if (refused !== undefined) return;
        try {
          reader.push(chunk);
        } catch (err) {
          refused =
            err instanceof Error ? err : new Error('unreadable COPY output', { cause: err });
        }
      });
      await finished(stream);
      if (refused !== undefined) throw refused;
      reader.end();
    })();
    await cancelable(Object.assign(copied, { cancel: () => query.cancel() }), signal);
    await connection.unsafe('commit');
    inTransaction = false;
  } finally {
    // A failed or canceled COPY leaves the transaction aborted: the connection goes back clean.
    if (inTransaction) await connection.unsafe('rollback').catch(() => undefined);
    connection.release();
  }
}
