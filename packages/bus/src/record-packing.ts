import type { BusMessage, RecordPacker } from './bus.js';
import { partitionForKey } from './murmur2.js';

/**
 * Groups `messages` by the partition their key hashes to among `partitions` (Kafka's murmur2,
 * as the default partitioner would) and packs each group into one record with that explicit
 * `partition`, so a request of many hosts costs one record per partition instead of one per
 * host. Every key still lands in the partition it always does, and the messages of a partition
 * keep their order: within a record as packed, and across records in the order returned.
 * Messages with headers, or with an explicit partition already, stay records of their own
 * (headers belong to one record). A group whose values would exceed `maxRecordBytes` is split
 * into consecutive records.
 */
export function packByPartition(
  messages: readonly BusMessage[],
  partitions: number,
  pack: RecordPacker,
  maxRecordBytes: number,
): BusMessage[] {
  if (!Number.isInteger(partitions) || partitions < 1) {
    throw new RangeError(`partitions must be a positive integer, got ${partitions}`);
  }
  type Group = { partition: number; key: string; values: Buffer[]; bytes: number };
  // Open groups by partition; `out` holds closed records and groups in the order they began,
  // which keeps each partition's records in publish order.
  const open = new Map<number, Group>();
  const out: (BusMessage | Group)[] = [];
  for (const message of messages) {
    if (message.headers !== undefined || message.partition !== undefined) {
      out.push(message);
      continue;
    }
    const partition = partitionForKey(message.key, partitions);
    let group = open.get(partition);
    if (group !== undefined && group.bytes + message.value.length > maxRecordBytes) {
      open.delete(partition);
      group = undefined;
    }
    if (group === undefined) {
      group = { partition, key: message.key, values: [], bytes: 0 };
      open.set(partition, group);
      out.push(group);
    }
    group.values.push(message.value);
    group.bytes += message.value.length;
  }
  return out.map((entry) =>
    'values' in entry
      ? { key: entry.key, value: pack(entry.values), partition: entry.partition }
      : entry,
  );
}
