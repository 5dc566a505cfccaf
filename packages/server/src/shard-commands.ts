import { Command, InvalidArgumentError } from 'commander';
import type { Database } from '@monitor/db';
import {
  assignPartitions,
  createDatabase,
  readPartitionShards,
  storedPartitionOffsets,
} from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { AdminConfig } from './config.js';
import { migrationOptions } from './config.js';
import { writerGroupId } from './consumer-groups.js';
import { warnOfMigration } from './migration-warnings.js';
import { migrateSampleShards } from './sample-shards.js';

type ShardsCommandDeps = {
  /** Runs `fn` on the control database (DATABASE_URL, or the embedded one). */
  withDatabase<T>(fn: (db: Database, config: AdminConfig) => Promise<T>): Promise<T>;
  print(value: unknown): void;
  createLogger(config: AdminConfig, name: string): Logger;
};

/** One shard's partitions of the samples topic, as `monitor shards list` prints them. */
type ShardPlacement = { name: string; default: boolean; partitions: number[] };

/**
 * `monitor shards list|add|move`: which sample shard holds each partition of the samples topic,
 * recorded in the control database. A partition is placed before its first sample; moving one
 * whose samples are stored (copy, catch up, switch through the bus) is not built yet, and the
 * command refuses it, naming the partition and the shard holding it.
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
  shards
    .command('move')
    .requiredOption('--partitions <list>', 'partitions of the samples topic, as 1,3', parseList)
    .requiredOption('--to <shard>', 'a shard SAMPLE_SHARDS names')
    .description(
      'place partitions on a shard before their first sample (a partition with stored samples ' +
        'is refused); restart the writers after it',
    )
    .action((options: { partitions: number[]; to: string }) =>
      deps.withDatabase(async (db, config) => {
        await place(db, config, options.partitions, options.to);
        deps.print(await placements(db, config));
      }),
    );
  shards
    .command('add')
    .argument('<shard>', 'a shard SAMPLE_SHARDS names, new or not')
    .requiredOption('--partitions <list>', 'partitions of the samples topic, as 1,3', parseList)
    .description(
      'migrate a shard and place partitions on it before their first sample (as `move`); ' +
        'restart the writers after it',
    )
    .action((name: string, options: { partitions: number[] }) =>
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
        await place(db, config, options.partitions, name);
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
 * Records `partitions` as held by `target` once neither their current shard nor `target` has
 * stored a sample of them; those on `target` already are left as they are.
 */
async function place(
  control: Database,
  config: AdminConfig,
  partitions: readonly number[],
  target: string,
): Promise<void> {
  listedShard(config, target);
  const listed = config.SAMPLE_SHARDS ?? [];
  const map = await readPartitionShards(control, config.SAMPLES_TOPIC);
  const ownerOf = (partition: number): string =>
    map.find((row) => row.partition === partition)?.shard ?? listed[0]?.name ?? '';
  // A partition on `target` already stays (its samples too): placing is idempotent.
  const moving = partitions.filter((partition) => ownerOf(partition) !== target);
  if (moving.length === 0) return;
  const involved = new Set([target, ...moving.map(ownerOf)]);
  for (const name of involved) {
    const shard = listed.find((each) => each.name === name);
    if (shard === undefined) continue;
    const db =
      shard.url === config.DATABASE_URL
        ? control
        : createDatabase({ url: shard.url, maxConnections: 1, applicationName: 'monitor-shards' });
    try {
      const stored = await storedPartitionOffsets(db, writerGroupId, config.SAMPLES_TOPIC, moving);
      if (stored.size > 0) {
        const held = [...stored].map(([partition, offset]) => `${partition} (to offset ${offset})`);
        throw new Error(
          `shard ${name} holds samples of partition ${held.join(', ')}: moving a partition with ` +
            'stored samples is not built yet (docs/operations.md, "Sample shards")',
        );
      }
    } finally {
      if (db !== control) await db.close();
    }
  }
  await assignPartitions(control, config.SAMPLES_TOPIC, moving, target);
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

function parseList(value: string): number[] {
  const partitions = value.split(',').map((part) => Number(part.trim()));
  if (partitions.some((p) => !Number.isInteger(p) || p < 0) || partitions.length === 0) {
    throw new InvalidArgumentError('a comma-separated list of partition numbers, as 1,3');
  }
  return [...new Set(partitions)];
}
