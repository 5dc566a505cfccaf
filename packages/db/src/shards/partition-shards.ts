import type { Database } from '../core/database.js';

/** One partition's shard, as the control database records it. */
export type PartitionShard = { partition: number; shard: string };

/**
 * The partitions of `topic` recorded on a shard other than the default one (the first of
 * SAMPLE_SHARDS holds every partition without a row), in partition order.
 */
export async function readPartitionShards(
  control: Database,
  topic: string,
): Promise<PartitionShard[]> {
  return await control.sql<PartitionShard[]>`
    select partition, shard from sample_partition_shards
    where topic = ${topic} order by partition`;
}

/** Records `partitions` of `topic` as held by `shard` (from now on: the move itself is the caller's). */
export async function assignPartitions(
  control: Database,
  topic: string,
  partitions: readonly number[],
  shard: string,
): Promise<void> {
  await control.sql`
    insert into sample_partition_shards (topic, partition, shard)
    select ${topic}, p, ${shard} from unnest(${[...partitions]}::int[]) as u(p)
    on conflict (topic, partition) do update set shard = excluded.shard`;
}

/**
 * The consumer group's stored offsets of `partitions` of `topic` in `db` (a shard), those past
 * 0 only: the partitions whose samples the writer stored there.
 */
export async function storedPartitionOffsets(
  db: Database,
  groupId: string,
  topic: string,
  partitions: readonly number[],
): Promise<Map<number, number>> {
  const rows = await db.sql<{ partition: number; next_offset: string }[]>`
    select partition, next_offset from consumer_offsets
    where group_id = ${groupId} and topic = ${topic} and partition = any(${[...partitions]}::int[])
      and next_offset > 0`;
  return new Map(rows.map((row) => [row.partition, Number(row.next_offset)]));
}
