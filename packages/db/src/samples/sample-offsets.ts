import type { TransactionSql } from '../core/database.js';

/** Which consumer's offsets the batch advances. */
export type OffsetOwner = { groupId: string; topic: string };

/**
 * Creates the offset rows of the batch's partitions if missing and returns their stored next
 * offsets, row-locked until commit: a second writer that briefly owns the same partition during
 * a rebalance waits here, then sees what this one wrote and skips it.
 */
export async function lockOffsets(
  tx: TransactionSql,
  owner: OffsetOwner,
  next: ReadonlyMap<number, number>,
): Promise<Map<number, number>> {
  const partitions = [...next.keys()].sort((a, b) => a - b); // one lock order for everyone
  const rows = await tx<{ partition: number; next_offset: string }[]>`
    insert into consumer_offsets as c (group_id, topic, partition, next_offset)
    select ${owner.groupId}, ${owner.topic}, p, 0
    from unnest(${partitions}::int[]) with ordinality as u(p, n)
    order by n
    on conflict (group_id, topic, partition) do update set next_offset = c.next_offset
    returning partition, next_offset
  `;
  return new Map(rows.map((row) => [row.partition, Number(row.next_offset)]));
}

/** Offsets only move forward, except those of a restarted log, which are replaced. */
export async function storeOffsets(
  tx: TransactionSql,
  owner: OffsetOwner,
  next: ReadonlyMap<number, number>,
  restarted: ReadonlySet<number>,
): Promise<void> {
  await tx`
    update consumer_offsets c
    set next_offset = case when u.partition = any(${[...restarted]}::int[]) then u.next_offset
                           else greatest(c.next_offset, u.next_offset) end
    from unnest(${[...next.keys()]}::int[], ${[...next.values()]}::bigint[]) as u(partition, next_offset)
    where c.group_id = ${owner.groupId} and c.topic = ${owner.topic} and c.partition = u.partition
  `;
}
