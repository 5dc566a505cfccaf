import type { Queryable } from '../core/database.js';

/**
 * Per topic, per partition: the highest next offset any consumer group stored. A bus whose log
 * does not survive a restart (the in-process one) resumes its offsets there, so the records of
 * the new process are never taken for replays of what the stored offsets already cover.
 */
export async function loadLogResumeOffsets(sql: Queryable): Promise<Map<string, number[]>> {
  const rows = await sql<{ topic: string; partition: number; next_offset: string }[]>`
    select topic, partition, max(next_offset) as next_offset
    from consumer_offsets
    group by topic, partition
  `;
  const offsets = new Map<string, number[]>();
  for (const row of rows) {
    const partitions = offsets.get(row.topic) ?? [];
    partitions[row.partition] = Number(row.next_offset);
    offsets.set(row.topic, partitions);
  }
  return offsets;
}
