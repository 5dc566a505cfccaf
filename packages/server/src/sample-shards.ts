import { partitionForKey } from '@monitor/bus';
import type {
  Database,
  MigrateOptions,
  MigrateResult,
  PartitionShard,
  ServiceIdentities,
} from '@monitor/db';
import { createDatabase, createServiceIdentities, migrate, readPartitionShards } from '@monitor/db';
import { sampleMessageKey } from '@monitor/schemas';
import type { Float64SlabLease } from '@monitor/db/series';
import { createPrometheusSeriesSource } from '@monitor/db/series';
import type { PartialAnswers, SeriesSource } from '@monitor/promql';
import { createMergedSeriesSource } from '@monitor/promql';
import type { Registry } from 'prom-client';
import { Gauge, Histogram } from 'prom-client';
import type { DatabaseConfig, SampleShardConfig } from './config.js';
import { openDatabase } from './dependencies.js';
import type { RoleContext } from './role-context.js';

/** A TimescaleDB cluster holding the samples of the partitions mapped to it. */
export type SampleShard = {
  name: string;
  /** Its primary: writes, and reads that must see them. */
  db: Database;
  /** Where reads that may lag go (`read_url`, else the primary). */
  reads: Database;
};

/** The shards of a deployment and which holds each partition of the samples topic. */
export type SampleShards = {
  /** Every shard, the default one (holding the partitions the control database maps nowhere) first. */
  readonly all: readonly SampleShard[];
  shardOf(partition: number): SampleShard;
  /**
   * Reads the control database's map again: a partition moved (`monitor shards move`). The
   * map stays as it was when the read fails.
   */
  reload(): Promise<void>;
};

/** Whether `control` is the deployment's one shard, so it holds every sample and service. */
export function holdsEverything(shards: readonly SampleShard[], control: Database): boolean {
  return shards.length === 1 && shards[0]?.db === control;
}

/**
 * Where the evaluator finds (or creates) an alerted host's service: on the shard of the
 * partition the host's samples go to (the bus keys them by `org_id:host`). Undefined when the
 * control database holds every service.
 */
export function shardServiceIdentities(
  control: Database,
  shards: SampleShards,
  samplesPartitions: number,
): ServiceIdentities | undefined {
  if (holdsEverything(shards.all, control)) return undefined;
  return createServiceIdentities(
    (orgId, host) =>
      shards.shardOf(partitionForKey(sampleMessageKey({ org_id: orgId, host }), samplesPartitions))
        .db,
  );
}

/** The one shard of a deployment without SAMPLE_SHARDS: the control database itself. */
const soleShardName = 'main';

/**
 * The shards with the control database's map (`readMap` reads it again on `reload`). Throws
 * when the map names a shard the list does not: that shard's samples would be read nowhere and
 * written to the wrong place.
 */
export function routeSampleShards(
  shards: readonly SampleShard[],
  map: readonly PartitionShard[],
  readMap?: () => Promise<PartitionShard[]>,
): SampleShards {
  const [first] = shards;
  if (first === undefined) throw new Error('a deployment has at least one sample shard');
  const byName = new Map(shards.map((shard) => [shard.name, shard]));
  const ownersOf = (rows: readonly PartitionShard[]): Map<number, SampleShard> => {
    const owners = new Map<number, SampleShard>();
    const unknown = new Map<string, number[]>();
    for (const { partition, shard } of rows) {
      const owner = byName.get(shard);
      if (owner !== undefined) owners.set(partition, owner);
      else unknown.set(shard, [...(unknown.get(shard) ?? []), partition]);
    }
    if (unknown.size > 0) {
      const named = [...unknown].map(([name, partitions]) => `${name} (${partitions.join(', ')})`);
      throw new Error(
        `the control database maps partitions to shards SAMPLE_SHARDS does not name: ${named.join('; ')}`,
      );
    }
    return owners;
  };
  let owners = ownersOf(map);
  return {
    all: shards,
    shardOf: (partition) => owners.get(partition) ?? first,
    async reload() {
      if (readMap !== undefined) owners = ownersOf(await readMap());
    },
  };
}

/**
 * Opens every shard's pools (a shard at the control database's URL shares its pools). Without
 * SAMPLE_SHARDS: one shard, the control database.
 */
export function openSampleShards(
  ctx: RoleContext,
  config: Pick<DatabaseConfig, 'DATABASE_POOL_MAX'> & SampleShardConfig,
  control: { url: string; primary: Database; reads: Database },
): SampleShard[] {
  const listed = config.SAMPLE_SHARDS;
  if (listed === undefined) {
    return [{ name: soleShardName, db: control.primary, reads: control.reads }];
  }
  return listed.map(({ name, url, read_url }): SampleShard => {
    if (url === control.url && read_url === undefined) {
      return { name, db: control.primary, reads: control.reads };
    }
    const db =
      url === control.url
        ? control.primary
        : openDatabase(ctx, config, url, `monitor-shard-${name}`);
    const reads =
      read_url === undefined
        ? db
        : openDatabase(ctx, config, read_url, `monitor-shard-${name}-reads`);
    return { name, db, reads };
  });
}

/**
 * Migrates every shard of SAMPLE_SHARDS but the control database (`controlUrl`, the caller's),
 * one at a time: a shard holds the same schema, its control tables unused.
 */
export async function migrateSampleShards(
  config: SampleShardConfig,
  controlUrl: string,
  options: MigrateOptions,
  onMigrated: (shard: string, result: MigrateResult) => void,
): Promise<void> {
  for (const { name, url } of config.SAMPLE_SHARDS ?? []) {
    if (url === controlUrl) continue;
    const db = createDatabase({ url, maxConnections: 1, applicationName: 'monitor-migrate' });
    try {
      onMigrated(name, await migrate(db, options));
    } finally {
      await db.close();
    }
  }
}

/** The shards with the partition map of `topic` the control database holds (the writer's). */
export async function openRoutedSampleShards(
  ctx: RoleContext,
  config: Pick<DatabaseConfig, 'DATABASE_POOL_MAX'> & SampleShardConfig,
  control: { url: string; primary: Database },
  topic: string,
): Promise<SampleShards> {
  const shards = openSampleShards(ctx, config, { ...control, reads: control.primary });
  // Without SAMPLE_SHARDS there is no map to read: every partition is the one shard's.
  if (config.SAMPLE_SHARDS === undefined) return routeSampleShards(shards, []);
  const readMap = () => readPartitionShards(control.primary, topic);
  return routeSampleShards(shards, await readMap(), readMap);
}

/** How the shards' reads went, for `/metrics`. */
export type ShardReadMetrics = {
  /** Times one shard's part of a read (labelled by shard). */
  timed<T>(shard: string, read: () => Promise<T>): Promise<T>;
};

/**
 * `monitor_shard_read_seconds{shard}`, each shard's part of a PromQL read, and
 * `monitor_shard_up{shard}`: whether the shard's reads answer a trivial query, asked at scrape
 * time (within 2 s), as Prometheus' own `up` tells whether a target answered its scrape.
 */
export function createShardReadMetrics(
  registry: Registry,
  shards: readonly SampleShard[],
): ShardReadMetrics {
  const seconds = new Histogram({
    name: 'monitor_shard_read_seconds',
    help: "How long each sample shard took over its part of a read (PromQL's selections, series and label lists).",
    labelNames: ['shard'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  new Gauge({
    name: 'monitor_shard_up',
    help: 'Whether each sample shard answered a trivial query within 2 s when /metrics was read (1) or not (0).',
    labelNames: ['shard'],
    registers: [registry],
    async collect() {
      await Promise.all(
        shards.map(async (shard) => {
          this.set({ shard: shard.name }, (await answersWithin(shard.reads, 2_000)) ? 1 : 0);
        }),
      );
    },
  });
  return {
    async timed(shard, read) {
      const end = seconds.startTimer({ shard });
      try {
        return await read();
      } finally {
        end();
      }
    },
  };
}

async function answersWithin(db: Database, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      db.ping().then(
        () => true as const,
        () => false as const,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * One organization's series over every shard's reads, merged (createMergedSeriesSource), each
 * shard's part timed when `metrics` is given.
 */
export function shardedSeriesSource(
  shards: readonly SampleShard[],
  orgId: string,
  options: { slabs?: Float64SlabLease; metrics?: ShardReadMetrics; partial?: PartialAnswers } = {},
): SeriesSource {
  const { metrics, partial, ...readOptions } = options;
  return createMergedSeriesSource(
    shards.map(({ name, reads }) => {
      const source = createPrometheusSeriesSource(reads, orgId, readOptions);
      return { name, source: metrics === undefined ? source : timedSource(name, source, metrics) };
    }),
    partial === undefined ? {} : { partial },
  );
}

function timedSource(shard: string, source: SeriesSource, metrics: ShardReadMetrics): SeriesSource {
  return {
    select: (...args) => metrics.timed(shard, () => source.select(...args)),
    series: (...args) => metrics.timed(shard, () => source.series(...args)),
    labelNames: (...args) => metrics.timed(shard, () => source.labelNames(...args)),
    labelValues: (...args) => metrics.timed(shard, () => source.labelValues(...args)),
  };
}
