import type { Database } from '../core/database.js';

/** A partition's move to another shard, as the control database records it (migration 42). */
export type PartitionMove = {
  id: number;
  topic: string;
  partition: number;
  fromShard: string;
  toShard: string;
  state: 'waiting' | 'done' | 'abandoned';
  /** The marker record's offset, once the writer reached it. */
  markerOffset: number | null;
  writerReached: boolean;
  evaluatorReached: boolean;
};

type MoveRow = {
  id: string;
  topic: string;
  partition: number;
  from_shard: string;
  to_shard: string;
  state: PartitionMove['state'];
  marker_offset: string | null;
  writer_reached_at: Date | null;
  evaluator_reached_at: Date | null;
};

const moveColumns = `id, topic, partition, from_shard, to_shard, state, marker_offset,
  writer_reached_at, evaluator_reached_at`;

function toMove(row: MoveRow): PartitionMove {
  return {
    id: Number(row.id),
    topic: row.topic,
    partition: row.partition,
    fromShard: row.from_shard,
    toShard: row.to_shard,
    state: row.state,
    markerOffset: row.marker_offset === null ? null : Number(row.marker_offset),
    writerReached: row.writer_reached_at !== null,
    evaluatorReached: row.evaluator_reached_at !== null,
  };
}

/**
 * The partition's waiting move, a new one from `fromShard` to `toShard` unless one is waiting
 * already (a command that stopped half way: it is resumed). `created` says whether it is new,
 * so its marker record has still to be published.
 */
export async function beginPartitionMove(
  control: Database,
  move: { topic: string; partition: number; fromShard: string; toShard: string },
): Promise<{ move: PartitionMove; created: boolean }> {
  const [waiting] = await control.sql.unsafe<MoveRow[]>(
    `select ${moveColumns} from sample_partition_moves
     where topic = $1 and partition = $2 and state = 'waiting'`,
    [move.topic, move.partition],
  );
  if (waiting !== undefined) {
    if (waiting.to_shard !== move.toShard) {
      throw new Error(
        `partition ${move.partition} is moving to shard ${waiting.to_shard} already (move ` +
          `${waiting.id}): run that move again to finish it`,
      );
    }
    return { move: toMove(waiting), created: false };
  }
  const [created] = await control.sql.unsafe<MoveRow[]>(
    `insert into sample_partition_moves (topic, partition, from_shard, to_shard, state)
     values ($1, $2, $3, $4, 'waiting') returning ${moveColumns}`,
    [move.topic, move.partition, move.fromShard, move.toShard],
  );
  return { move: toMove(created as MoveRow), created: true };
}

export async function readPartitionMove(
  control: Database,
  id: number,
): Promise<PartitionMove | undefined> {
  const [row] = await control.sql.unsafe<MoveRow[]>(
    `select ${moveColumns} from sample_partition_moves where id = $1`,
    [id],
  );
  return row === undefined ? undefined : toMove(row);
}

/**
 * Records that `consumer` handled every record of the partition before the move's marker (at
 * `markerOffset`): the writer stored them on the old shard, the evaluator evaluated them.
 */
export async function markMoveReached(
  control: Database,
  id: number,
  consumer: 'writer' | 'evaluator',
  markerOffset: number,
): Promise<void> {
  if (consumer === 'writer') {
    await control.sql`
      update sample_partition_moves
      set writer_reached_at = coalesce(writer_reached_at, now()), marker_offset = ${markerOffset}
      where id = ${id} and state = 'waiting'`;
  } else {
    await control.sql`
      update sample_partition_moves set evaluator_reached_at = coalesce(evaluator_reached_at, now())
      where id = ${id} and state = 'waiting'`;
  }
}

/** Ends a waiting move: the map gives the partition to its new shard (`done`) or not. */
export async function finishPartitionMove(
  control: Database,
  move: PartitionMove,
  state: 'done' | 'abandoned',
): Promise<void> {
  await control.sql.begin(async (tx) => {
    const [updated] = await tx`
      update sample_partition_moves set state = ${state}, finished_at = now()
      where id = ${move.id} and state = 'waiting' returning id`;
    if (updated === undefined) throw new Error(`move ${move.id} is not waiting`);
    if (state === 'done') {
      await tx`
        insert into sample_partition_shards (topic, partition, shard)
        values (${move.topic}, ${move.partition}, ${move.toShard})
        on conflict (topic, partition) do update set shard = excluded.shard`;
    }
  });
}
