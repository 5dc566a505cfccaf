import { setTimeout as sleep } from 'node:timers/promises';
import { Command, InvalidArgumentError } from 'commander';
import type { Bus } from '@monitor/bus';
import { partitionForKey } from '@monitor/bus';
import type { Database, PartitionMove } from '@monitor/db';
import {
  assignPartitions,
  beginPartitionMove,
  copyShardServices,
  createDatabase,
  dropShardServices,
  fenceMovedPartition,
  finishPartitionMove,
  listShardServices,
  readPartitionMove,
  readPartitionShards,
  showMovedServices,
  storedPartitionOffsets,
} from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { sampleMessageKey } from '@monitor/schemas';
import type { AdminConfig } from './config.js';
import { migrationOptions } from './config.js';
import { evaluatorGroupId, writerGroupId } from './consumer-groups.js';
import { warnOfMigration } from './migration-warnings.js';
import { partitionMoveHeader } from './partition-move-markers.js';
import { migrateSampleShards } from './sample-shards.js';

type ShardsCommandDeps = {
  /** Runs `fn` on the control database (DATABASE_URL, or the embedded one). */
  withDatabase<T>(fn: (db: Database, config: AdminConfig) => Promise<T>): Promise<T>;
  print(value: unknown): void;
  createLogger(config: AdminConfig, name: string): Logger;
  /** The deployment's Kafka (KAFKA_BROKERS): a move's marker goes through it. */
  openBus(config: AdminConfig, logger: Logger): Bus;
};

/** What `move` and `add` take besides the partitions. */
type MoveOptions = { waitSeconds: number; placeOnly?: boolean };

/** One shard's partitions of the samples topic, as `monitor shards list` prints them. */
type ShardPlacement = { name: string; default: boolean; partitions: number[] };

/**
 * `monitor shards list|add|move`: which sample shard holds each partition of the samples topic,
 * recorded in the control database. A partition without stored samples is placed by the map
 * alone; one with samples is moved with them while ingest runs (`movePartition`).
 */
export function createShardsCommand(deps: ShardsCommandDeps): Command {
  const shards = new Command('shards').description(
    'which sample shard (SAMPLE_SHARDS) holds each partition of the samples topic',
  );
  shards
    .command('list')
    .description('print each shard with the partitions the control database maps to it')
    .action(() =>
      deps.withDatabase(async (db, config) => deps.print(await placements(db, config))),
    );
  const waitOption = [
    '--wait-seconds <n>',
    'how long a move waits for the writer and the evaluator to reach its marker before it is ' +
      'given up',
    parseSeconds,
    300,
  ] as const;
  const placeOnlyOption = [
    '--place-only',
    'refuse a partition with stored samples instead of moving it (for setup scripts that run ' +
      'before the writers)',
  ] as const;
  shards
    .command('move')
    .requiredOption('--partitions <list>', 'partitions of the samples topic, as 1,3', parseList)
    .requiredOption('--to <shard>', 'a shard SAMPLE_SHARDS names')
    .option(...waitOption)
    .option(...placeOnlyOption)
    .description(
      'give partitions to a shard: with their stored samples, while ingest runs (KAFKA_BROKERS ' +
        'is needed then); a partition without samples is placed by the map alone (restart ' +
        'the writers after that)',
    )
    .action((options: { partitions: number[]; to: string } & MoveOptions) =>
      deps.withDatabase(async (db, config) => {
        const logger = deps.createLogger(config, 'monitor-shards');
        await place(db, config, options.partitions, options.to, { ...deps, logger, ...options });
        deps.print(await placements(db, config));
      }),
    );
  shards
    .command('add')
    .argument('<shard>', 'a shard SAMPLE_SHARDS names, new or not')
    .requiredOption('--partitions <list>', 'partitions of the samples topic, as 1,3', parseList)
    .option(...waitOption)
    .option(...placeOnlyOption)
    .description('migrate a shard and give it partitions (as `move`)')
    .action((name: string, options: { partitions: number[] } & MoveOptions) =>
      deps.withDatabase(async (db, config) => {
        const shard = listedShard(config, name);
        const logger = deps.createLogger(config, 'monitor-shards');
        await migrateSampleShards(
          { SAMPLE_SHARDS: [shard] },
          config.DATABASE_URL ?? '',
          migrationOptions(config),
          (migrated, result) => {
            warnOfMigration(logger.child({ shard: migrated }), result);
            logger.info({ shard: migrated, applied: result.applied }, 'migrated the shard');
          },
        );
        await place(db, config, options.partitions, name, { ...deps, logger, ...options });
        deps.print(await placements(db, config));
      }),
    );
  return shards;
}

async function placements(
  control: Database,
  config: AdminConfig,
): Promise<{ topic: string; shards: ShardPlacement[]; unknown: ShardPlacement[] }> {
  const map = await readPartitionShards(control, config.SAMPLES_TOPIC);
  const listed = (config.SAMPLE_SHARDS ?? [{ name: 'main' }]).map(({ name }) => name);
  const partitionsOf = (name: string): number[] =>
    map.filter((row) => row.shard === name).map((row) => row.partition);
  const unknown = [...new Set(map.map((row) => row.shard))].filter(
    (name) => !listed.includes(name),
  );
  return {
    topic: config.SAMPLES_TOPIC,
    // The first shard holds every partition the map does not name.
    shards: listed.map((name, i) => ({ name, default: i === 0, partitions: partitionsOf(name) })),
    // Named by the map, not by SAMPLE_SHARDS: the roles refuse to start so.
    unknown: unknown.map((name) => ({ name, default: false, partitions: partitionsOf(name) })),
  };
}

/**
 * Gives `partitions` to `target`: those without stored samples by the map alone, the others
 * one at a time by `movePartition`. Those on `target` already are left as they are.
 */
async function place(
  control: Database,
  config: AdminConfig,
  partitions: readonly number[],
  target: string,
  deps: Pick<ShardsCommandDeps, 'openBus'> & MoveOptions & { logger: Logger },
): Promise<void> {
  listedShard(config, target);
  const listed = config.SAMPLE_SHARDS ?? [];
  const map = await readPartitionShards(control, config.SAMPLES_TOPIC);
  const ownerOf = (partition: number): string =>
    map.find((row) => row.partition === partition)?.shard ?? listed[0]?.name ?? '';
  // A partition on `target` already stays (its samples too): placing is idempotent.
  const moving = partitions.filter((partition) => ownerOf(partition) !== target);
  if (moving.length === 0) return;
  const opened = new Map<string, Database>();
  const shardDb = (name: string): Database => {
    const url = listedShard(config, name).url;
    if (url === config.DATABASE_URL) return control;
    let db = opened.get(name);
    if (db === undefined) {
      db = createDatabase({ url, maxConnections: 2, applicationName: 'monitor-shards' });
      opened.set(name, db);
    }
    return db;
  };
  let bus: Bus | undefined;
  try {
    const withSamples = new Set<number>();
    for (const name of new Set([target, ...moving.map(ownerOf)])) {
      const stored = await storedPartitionOffsets(
        shardDb(name),
        writerGroupId,
        config.SAMPLES_TOPIC,
        moving,
      );
      if (stored.size > 0 && deps.placeOnly === true) {
        const held = [...stored].map(([partition, offset]) => `${partition} (to offset ${offset})`);
        throw new Error(
          `shard ${name} holds samples of partition ${held.join(', ')}: --place-only places ` +
            'partitions without samples only (without it, they are moved with their samples)',
        );
      }
      for (const partition of stored.keys()) withSamples.add(partition);
    }
    // Before anything changes: a move needs the bus.
    if (withSamples.size > 0) bus = deps.openBus(config, deps.logger);
    const placed = moving.filter((partition) => !withSamples.has(partition));
    if (placed.length > 0) await assignPartitions(control, config.SAMPLES_TOPIC, placed, target);
    for (const partition of moving.filter((each) => withSamples.has(each))) {
      const from = ownerOf(partition);
      await movePartition(
        { control, bus: bus as Bus, logger: deps.logger.child({ partition, from, to: target }) },
        { topic: config.SAMPLES_TOPIC, partitions: config.SAMPLES_TOPIC_PARTITIONS },
        {
          partition,
          from: { name: from, db: shardDb(from) },
          to: { name: target, db: shardDb(target) },
        },
        {
          waitSeconds: deps.waitSeconds,
          // Past what a writer records as a late write (PROMQL_CACHE_SETTLED_MS / 2), with room
          // for the clocks of the writers and the database to differ.
          recentMs: Math.max(3_600_000, 2 * config.PROMQL_CACHE_SETTLED_MS),
        },
      );
    }
  } finally {
    await bus?.close();
    for (const db of opened.values()) await db.close();
  }
}

type NamedShard = { name: string; db: Database };

/**
 * Moves one partition with everything stored of it while ingest runs: its history is copied
 * while it is still stored on the old shard; then a marker record through the partition stops
 * its writer and evaluator at one offset, what came since the history's copy is copied (the
 * catch-up), the old shard fenced, the map switched in the control database (the consumers go
 * on to the new shard from the marker), and the old copy dropped. Given up (the consumers go on
 * where they were) when anything before the switch fails; run again, a move that stopped half
 * way is taken up where it is.
 */
async function movePartition(
  deps: { control: Database; bus: Bus; logger: Logger },
  topic: { topic: string; partitions: number },
  shards: { partition: number; from: NamedShard; to: NamedShard },
  options: { waitSeconds: number; recentMs: number },
): Promise<void> {
  const { control, logger } = deps;
  const { partition, from, to } = shards;
  const { partitions } = await deps.bus.admin.ensureTopic(topic.topic, {
    partitions: topic.partitions,
  });
  /** The partition's services on the old shard (they are keyed by `org_id:host`, as the bus). */
  const partitionServices = async (): Promise<string[]> =>
    (await listShardServices(from.db))
      .filter(
        (service) =>
          partitionForKey(
            sampleMessageKey({ org_id: service.orgId, host: service.name }),
            partitions,
          ) === partition,
      )
      .map((service) => service.id);
  const begun = await beginPartitionMove(control, {
    topic: topic.topic,
    partition,
    fromShard: from.name,
    toShard: to.name,
  });
  let move = begun.move;
  const reached = (each: PartitionMove) => each.writerReached && each.evaluatorReached;
  const fence = { groupId: writerGroupId, topic: topic.topic, partition };
  let ids = await partitionServices();
  try {
    const started = performance.now();
    const history = await copyShardServices(from.db, to.db, ids, {
      phase: 'history',
      recentMs: options.recentMs,
    });
    logger.info(
      { move: move.id, seconds: seconds(started), ...history },
      "copied the partition's history to its new shard",
    );
    if (!reached(move)) {
      // Again when a move is taken up: a second marker of one move is passed once it is done.
      await deps.bus.publisher().publish(topic.topic, [
        {
          key: `partition-move:${move.id}`,
          value: Buffer.alloc(0),
          headers: { [partitionMoveHeader]: String(move.id) },
          partition,
        },
      ]);
    }
    logger.info(
      { move: move.id, resumed: !begun.created },
      'waiting for the consumers at the marker',
    );
    const deadline = Date.now() + options.waitSeconds * 1000;
    while (!reached(move)) {
      if (Date.now() > deadline) {
        const missing = [
          ...(move.writerReached ? [] : [writerGroupId]),
          ...(move.evaluatorReached ? [] : [evaluatorGroupId]),
        ];
        throw new Error(
          `no ${missing.join(' and no ')} reached the marker within ${options.waitSeconds} s: ` +
            'are they running and caught up?',
        );
      }
      await sleep(200);
      move = (await readPartitionMove(control, move.id)) ?? move;
    }
    const paused = performance.now();
    // Listed again: the writer may have created services of the partition until its marker.
    ids = await partitionServices();
    const caughtUp = await copyShardServices(from.db, to.db, ids, {
      phase: 'catch-up',
      since: history.cut,
      offsets: { ...fence, nextOffset: move.markerOffset as number },
    });
    await fenceMovedPartition(from.db, ids, fence, to.name);
    await showMovedServices(to.db, ids);
    await finishPartitionMove(control, move, 'done');
    logger.info(
      { move: move.id, pausedSeconds: seconds(paused), ...caughtUp },
      'caught up and switched: the partition is stored on its new shard',
    );
  } catch (err) {
    logger.error({ err, move: move.id }, 'the move is given up; the partition stays where it was');
    await dropShardServices(to.db, ids, { keepServices: to.db === control });
    await fenceMovedPartition(from.db, ids, fence, null);
    await finishPartitionMove(control, move, 'abandoned');
    throw err;
  }
  // The consumers go on at the new shard now; the old copy is read nowhere but takes space.
  await dropShardServices(from.db, ids, { keepServices: from.db === control });
  logger.info({ move: move.id, services: ids.length }, 'dropped the old copy of the partition');
}

function seconds(sinceMs: number): number {
  return Math.round(performance.now() - sinceMs) / 1000;
}

function listedShard(config: AdminConfig, name: string): { name: string; url: string } {
  const shard = config.SAMPLE_SHARDS?.find((each) => each.name === name);
  if (shard === undefined) {
    throw new Error(
      config.SAMPLE_SHARDS === undefined
        ? 'SAMPLE_SHARDS is unset: the one shard is the control database'
        : `SAMPLE_SHARDS names no shard ${name}`,
    );
  }
  return shard;
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds <= 0) {
    throw new InvalidArgumentError('a whole number of seconds, as 300');
  }
  return seconds;
}

function parseList(value: string): number[] {
  const partitions = value.split(',').map((part) => Number(part.trim()));
  if (partitions.some((p) => !Number.isInteger(p) || p < 0) || partitions.length === 0) {
    throw new InvalidArgumentError('a comma-separated list of partition numbers, as 1,3');
  }
  return [...new Set(partitions)];
}
