import type { BatchContext, ConsumedRecord, RecordBatch } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { markMoveReached, readPartitionMove } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { AppError } from '@monitor/platform';
import type { SampleShards } from './sample-shards.js';

/**
 * The header of a partition move's marker record in the samples topic (`monitor shards move`):
 * the move's id. The record has no value; nothing but this module reads it.
 */
export const partitionMoveHeader = 'x-monitor-partition-move';

/** The move a record marks, if it is a marker. */
function moveMarkedBy(record: ConsumedRecord): number | undefined {
  const id = record.headers[partitionMoveHeader];
  return id === undefined ? undefined : Number(id);
}

/** The partition waits at its marker until its move is done or given up: redelivered after a backoff. */
class MoveWaitingError extends AppError {
  constructor(partition: number, move: number, toShard: string) {
    super(
      'dependency_unavailable',
      `partition ${partition} waits at its move marker until move ${move} to shard ${toShard} is done`,
      { retriable: true },
    );
  }
}

type BatchHandler = (batch: RecordBatch, ctx: BatchContext) => Promise<void>;

/**
 * A handler of the samples topic that stops at a partition move's marker: what came before it
 * is handled (on the old shard), then the control database is told the consumer got there, and
 * the batch comes back after a backoff until the move is done (the map then gives the
 * partition's next records to the new shard) or given up (they stay where they were). A marker
 * is handled by each consumer group once, like any record, and a replayed one finds its move
 * finished. So ownership changes at one offset of the partition's log, for the writer and the
 * evaluator alike, and the move command copies what came since its copy of the partition's
 * history while nothing writes it.
 */
export function stoppingAtMoveMarkers(
  consumer: 'writer' | 'evaluator',
  deps: { control: Database; shards: SampleShards; logger: Logger },
  handle: BatchHandler,
): BatchHandler {
  const announced = new Set<number>();
  return async (batch, ctx) => {
    let records = batch.records;
    for (;;) {
      const at = records.findIndex((record) => moveMarkedBy(record) !== undefined);
      if (at === -1) {
        if (records.length > 0) await handle({ ...batch, records }, ctx);
        return;
      }
      if (at > 0) await handle({ ...batch, records: records.slice(0, at) }, ctx);
      const marker = records[at] as ConsumedRecord;
      const id = moveMarkedBy(marker) as number;
      const move = await readPartitionMove(deps.control, id);
      if (move?.state === 'waiting') {
        await markMoveReached(deps.control, id, consumer, Number(marker.offset));
        if (!announced.has(id)) {
          announced.add(id);
          deps.logger.info(
            { partition: batch.partition, move: id, from: move.fromShard, to: move.toShard },
            'partition waits at its move marker until the move is done',
          );
        }
        throw new MoveWaitingError(batch.partition, id, move.toShard);
      }
      // Done (the new owner), given up, or unknown: the map says who holds the partition now.
      await deps.shards.reload();
      if (announced.delete(id)) {
        deps.logger.info(
          { partition: batch.partition, move: id, state: move?.state ?? 'unknown' },
          'partition goes on past its move marker',
        );
      }
      records = records.slice(at + 1);
    }
  };
}
