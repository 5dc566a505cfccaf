import { AppError } from '@monitor/platform';
import type { TransactionSql } from '../core/database.js';

/** Which consumer's offsets the batch advances. */
export type OffsetOwner = { groupId: string; topic: string };

/** What a batch's transaction finds stored before it writes. */
export type LockedOffsets = {
  /** Each partition's stored next offset. */
  nextOffsets: Map<number, number>;
  /**
   * A time at or after every stored sample's (epoch ms; −Infinity when nothing is stored): the
   * newest bound of every partition and of writes without offsets (`sample_newest_bounds`).
   */
  newestBoundMs: number;
};

/**
 * A batch of a partition that moved to another shard, written to the shard it left by a writer
 * that still routes it there (it read the map before the move): nothing of it is stored, and the
 * writer reads the map again before the batch comes back (`monitor shards move`).
 */
export class PartitionMovedError extends AppError {
  constructor(readonly moves: readonly { partition: number; movedTo: string }[]) {
    super(
      'dependency_unavailable',
      `partition ${moves.map((m) => `${m.partition} moved to shard ${m.movedTo}`).join(', ')}`,
      { retriable: true },
    );
  }
}

/**
 * Creates the offset rows of the batch's partitions if missing and returns their stored next
 * offsets, row-locked until commit: a second writer that briefly owns the same partition during
 * a rebalance waits here, then sees what this one wrote and skips it. The newest bound reads
 * those rows as locked (so it covers what that other writer stored) and the others as of now.
 * Throws `PartitionMovedError` when a partition moved to another shard.
 */
export async function lockOffsets(
  tx: TransactionSql,
  owner: OffsetOwner,
  next: ReadonlyMap<number, number>,
): Promise<LockedOffsets> {
  const partitions = [...next.keys()].sort((a, b) => a - b); // one lock order for everyone
  const rows = await tx<
    {
      partition: number;
      next_offset: string;
      newest_time_ms: string | null;
      moved_to: string | null;
      others: string | null;
    }[]
  >`
    with locked as (
      insert into consumer_offsets as c (group_id, topic, partition, next_offset)
      select ${owner.groupId}, ${owner.topic}, p, 0
      from unnest(${partitions}::int[]) with ordinality as u(p, n)
      order by n
      on conflict (group_id, topic, partition) do update set next_offset = c.next_offset
      returning partition, next_offset, newest_time_ms, moved_to
    )
    select partition, next_offset, newest_time_ms, moved_to,
      greatest((select max(newest_time_ms) from consumer_offsets),
        (select newest_time_ms from sample_newest_bounds)) as others
    from locked
  `;
  const moved = rows.filter((row) => row.moved_to !== null);
  if (moved.length > 0) {
    throw new PartitionMovedError(
      moved.map((row) => ({ partition: row.partition, movedTo: row.moved_to as string })),
    );
  }
  let newestBoundMs = Number.NEGATIVE_INFINITY;
  for (const row of rows) {
    for (const ms of [row.newest_time_ms, row.others]) {
      if (ms !== null) newestBoundMs = Math.max(newestBoundMs, Number(ms));
    }
  }
  return {
    nextOffsets: new Map(rows.map((row) => [row.partition, Number(row.next_offset)])),
    newestBoundMs,
  };
}

/** The newest bound for a batch without offsets (see `LockedOffsets.newestBoundMs`). */
export async function readNewestBound(tx: TransactionSql): Promise<number> {
  const [row] = await tx<{ ms: string | null }[]>`
    select greatest((select max(newest_time_ms) from consumer_offsets),
      (select newest_time_ms from sample_newest_bounds)) as ms`;
  return row?.ms == null ? Number.NEGATIVE_INFINITY : Number(row.ms);
}

/** Raises the newest bound of writes without offsets to a batch's newest sample time. */
export async function raiseNewestBound(tx: TransactionSql, newestMs: number): Promise<void> {
  await tx`
    insert into sample_newest_bounds as b (newest_time_ms) values (${newestMs}::bigint)
    on conflict (singleton) do update
    set newest_time_ms = greatest(b.newest_time_ms, excluded.newest_time_ms)`;
}

/**
 * Offsets only move forward, except those of a restarted log, which are replaced; each
 * partition's newest bound only moves forward, to its batch's newest sample time.
 */
export async function storeOffsets(
  tx: TransactionSql,
  owner: OffsetOwner,
  next: ReadonlyMap<number, number>,
  restarted: ReadonlySet<number>,
  newestMs: ReadonlyMap<number, number>,
): Promise<void> {
  const partitions = [...next.keys()];
  await tx`
    update consumer_offsets c
    set next_offset = case when u.partition = any(${[...restarted]}::int[]) then u.next_offset
                           else greatest(c.next_offset, u.next_offset) end,
      newest_time_ms = greatest(c.newest_time_ms, u.newest_time_ms)
    from unnest(${partitions}::int[], ${[...next.values()]}::bigint[],
      ${partitions.map((partition) => newestMs.get(partition) ?? null)}::bigint[])
      as u(partition, next_offset, newest_time_ms)
    where c.group_id = ${owner.groupId} and c.topic = ${owner.topic} and c.partition = u.partition
  `;
}
