/**
 * The capacity planner's arithmetic (`monitor capacity`): from a fleet's shape to replicas,
 * cores, memory and disk, using per-unit costs that benchmarks measured (capacity-costs.json,
 * each figure naming its run). Pure: the command reads the file and prints the plan.
 */

import {
  defaultStoragePolicies,
  headChunkMs,
  headCompressLagMs,
  mergedSpanAtMostMs,
} from '@monitor/db';

/** One measured cost and the run it comes from. */
type Figure = {
  value: number;
  unit: string;
  bench: string;
  date: string;
  machine: string;
  source: string;
};

const figureNames = [
  'gatewayCpuUsPerRequest',
  'gatewayCpuUsPerSample',
  'redisCpuUsPerRequest',
  'kafkaCpuUsPerSample',
  'writerCpuUsPerRow',
  'writerCpuUsPerHostSample',
  'postgresCpuUsPerRow',
  'postgresCpuUsPerHostSample',
  'shardPostgresCpuFactor',
  'evaluatorCpuUsPerHostSample',
  'evaluatorCpuUsPerSampleRule',
  'busBytesPerRequest',
  'busBytesPerSample',
  'rawBytesPerSampleCompressed',
  'rawBytesPerMergedBatch',
  'rawBytesPerRowUncompressed',
  'tier5mBytesPerRowCompressed',
  'tier5mBytesPerRowUncompressed',
  'tier1hBytesPerRowCompressed',
  'tier1hBytesPerRowUncompressed',
  'bytesPerSeries',
  'gatewayRssMiB',
  'writerRssMiB',
  'loadGeneratorCpuUsPerRequest',
] as const;

export type CapacityCosts = {
  version: 1;
  figures: Record<(typeof figureNames)[number], Figure>;
  /** The latest recorded bench figure the planner must reproduce. */
  check: {
    bench: string;
    date: string;
    machine: string;
    cores: number;
    hostsPerRequest: number;
    metricsPerHost: number;
    samplesPerSecond: number;
    tolerance: number;
  };
};

const figureFields = ['unit', 'bench', 'date', 'machine', 'source'] as const;

/** The costs file, checked: every figure present with a value and its source. */
export function parseCapacityCosts(json: unknown): CapacityCosts {
  const costs = json as Partial<CapacityCosts> | null;
  if (costs?.version !== 1) throw new Error('capacity costs: version must be 1');
  const figures = (costs.figures ?? {}) as Record<string, Partial<Figure> | undefined>;
  const required: readonly string[] = figureNames;
  for (const name of required) {
    const figure = figures[name];
    if (typeof figure?.value !== 'number' || !(figure.value >= 0))
      throw new Error(`capacity costs: ${name} needs a non-negative value`);
    for (const field of figureFields) {
      if (typeof figure[field] !== 'string' || figure[field] === '')
        throw new Error(`capacity costs: ${name} needs its ${field}`);
    }
  }
  const check = costs.check;
  if (
    check === undefined ||
    !(check.cores > 0 && check.samplesPerSecond > 0 && check.tolerance > 0) ||
    !(check.hostsPerRequest >= 1 && check.metricsPerHost >= 1)
  )
    throw new Error('capacity costs: check needs cores, a workload, samplesPerSecond, tolerance');
  return costs as CapacityCosts;
}

export type FleetShape = {
  hosts: number;
  metricsPerHost: number;
  intervalSeconds: number;
  /** Raw sample retention (RAW_RETENTION_DAYS). */
  retentionDays: number;
  /**
   * How long the 5-minute and 1-hour kept tiers are kept (ROLLUP_1M/1H_RETENTION_DAYS, named
   * after the aggregates they replaced).
   */
  rollup1mRetentionDays: number;
  rollup1hRetentionDays: number;
  /** Alert rules; each evaluated on every sample of its metric (rules spread over the metrics). */
  rules: number;
  /** Hosts per ingest request: 1 for agents that each send their own. */
  hostsPerRequest: number;
  /**
   * CPU cores the primary spends answering reads (the api role's queries, PromQL), as measured
   * on a running deployment; undefined when not measured (the plan then counts writes only).
   */
  databaseReadCores?: number | undefined;
};

/** What the plan assumes besides the measured costs: deployment choices, stated in the output. */
export type PlanAssumptions = {
  /** Replicas are sized to run at this share of one core at the planned load (headroom). */
  targetUtilization: number;
  /** Cores per Kafka broker machine. */
  brokerCores: number;
  /** Kafka replication factor (acks=all needs at least this many brokers). */
  replicationFactor: number;
  /** How long the samples topic keeps records (the broker's default, 7 days). */
  topicRetentionDays: number;
  /**
   * A head chunk is compressed this long after its end (COMPRESS_AFTER_HOURS, at least the
   * minute head-chunks.ts waits).
   */
  compressAfterHours: number;
  /** How often the compression job runs: a head chunk may wait this long besides. */
  jobIntervalHours: number;
  /**
   * How many hours of samples sit in batches merged from head chunks, not yet consolidated, at
   * most: the widest step between two consolidations of a growing compressed chunk and the
   * consolidation job's 30 minutes.
   */
  mergedHours: number;
  /**
   * The kept tiers (db/src/storage/kept-tiers.ts) are stored this long before the raw retention
   * drops their samples, and kept to ROLLUP_1M_RETENTION_DAYS (5-minute) and
   * ROLLUP_1H_RETENTION_DAYS (1-hour).
   */
  tierFillBeforeRawRetentionHours: number;
  /**
   * What the fill stored since its last whole UTC day sits uncompressed: the tiers are
   * compressed a day at a time, the chunk being filled recompressed with what came since.
   */
  tierUncompressedHours: number;
  /**
   * Their chunk intervals: retention drops whole chunks, so a tier holds up to one chunk more
   * than its retention, just before its oldest goes.
   */
  tier5mChunkHours: number;
  tier1hChunkHours: number;
  /** The largest TimescaleDB primary one would run; beyond it the design stops scaling. */
  maxDatabaseCores: number;
  maxDatabaseMemoryGB: number;
  /**
   * Standbys beside the primary (Patroni's synchronous standby is one): each is a whole copy,
   * sized as the primary, since it becomes the primary on a failover.
   */
  databaseStandbys: number;
};

export const defaultAssumptions: PlanAssumptions = {
  targetUtilization: 0.7,
  brokerCores: 4,
  replicationFactor: 3,
  topicRetentionDays: 7,
  compressAfterHours: Math.max(
    defaultStoragePolicies.compressAfterHours,
    headCompressLagMs / 3.6e6,
  ),
  jobIntervalHours: 1 / 60,
  mergedHours: mergedSpanAtMostMs / 3.6e6 + 0.5,
  tierFillBeforeRawRetentionHours: 6,
  tierUncompressedHours: 24 + 1,
  tier5mChunkHours: 7 * 24,
  tier1hChunkHours: 30 * 24,
  maxDatabaseCores: 32,
  maxDatabaseMemoryGB: 1024,
  databaseStandbys: 1,
};

/** Consumers per writer replica (WRITER_CONSUMERS' default). */
const writerConsumersPerReplica = 2;
/** The partition count's floor (SAMPLES_TOPIC_PARTITIONS' default). */
const minimumPartitions = 6;
/** The head chunks' interval (storage/timescale/head-chunks.ts), in hours. */
const headChunkHours = headChunkMs / 3.6e6;

export type CapacityPlan = {
  samplesPerSecond: number;
  hostSamplesPerSecond: number;
  requestsPerSecond: number;
  /** Rule evaluations per second: each sample against the rules on its metric. */
  evaluationsPerSecond: number;
  gateway: { cores: number; replicas: number; memoryMiB: number };
  redis: { cores: number };
  kafka: {
    brokers: number;
    cores: number;
    partitions: number;
    ingressMBps: number;
    diskGB: number;
  };
  writer: { cores: number; replicas: number; memoryMiB: number };
  evaluator: { cores: number; replicas: number };
  database: {
    /** Cores of work the writes cost the primary (measured costs). */
    cores: number;
    /** Cores of work its reads cost (measured by the user; 0 when not given). */
    readCores: number;
    /**
     * Cores the primary and each standby get at the target utilization: the writes, and the
     * reads unless read replicas take them (a standby that takes over serves what it did).
     */
    coresPerNode: number;
    memoryGB: number;
    /** The interval of the head chunks that memory was sized for, in minutes. */
    headChunkMinutes: number;
    diskGB: number;
    /** Disk at steady state, by what holds it. */
    disk: {
      rawGB: number;
      tier5mGB: number;
      tier1hGB: number;
      seriesGB: number;
    };
    /** The disk over the raw samples' alone (issue 57's limit: 2). */
    rawMultiple: number;
    /** Disk per raw sample kept, everything counted. */
    bytesPerSample: number;
    /** Whether one primary of at most `maxDatabaseCores` takes the writes (reads can move). */
    fitsOnePrimary: boolean;
    /**
     * Sample shards (SAMPLE_SHARDS) so that each primary takes its share of the writes within
     * `maxDatabaseCores` and `maxDatabaseMemoryGB`: 1 while one primary does. Past one, a
     * shard's PostgreSQL costs `shardPostgresCpuFactor` times one database's per sample (each
     * takes a share of every writer batch, in a transaction of its own), and each holds an
     * equal share of the partitions.
     */
    shards: {
      count: number;
      /** A shard's PostgreSQL CPU per sample over one database's: 1 with one shard. */
      postgresCpuFactor: number;
      coresPerNode: number;
      memoryGB: number;
      diskGB: number;
    };
    /** The primary and its standbys, each as large as the primary (read replicas aside). */
    nodes: number;
    /** Every node, read replicas included. */
    total: { cores: number; memoryGB: number; diskGB: number };
    readReplica: ReadReplicaVerdict;
  };
};

/**
 * Whether read replicas (nodes of their own beyond the standbys) pay for themselves. A replica
 * is a whole copy of the database (its memory, its disk) that also replays every write, which
 * we count as costing it what the writes cost the primary (an upper bound: replay skips parsing,
 * planning and locking). Giving the primary the cores its reads take costs cores only, so a
 * replica pays only once writes and reads no longer fit the largest primary one would run; then
 * enough replicas to take the reads, each serving what is left of that size after the replay.
 */
export type ReadReplicaVerdict =
  | { pays: undefined; reason: 'reads not measured' }
  | { pays: false; reason: 'primary takes both' }
  | { pays: true; reason: 'primary too small for both'; replicas: number; coresPerReplica: number }
  | { pays: false; reason: 'writes alone fill the primary' };

export function readReplicaVerdict(
  writeCores: number,
  readCores: number | undefined,
  assumptions: Pick<PlanAssumptions, 'targetUtilization' | 'maxDatabaseCores'>,
): ReadReplicaVerdict {
  if (readCores === undefined) return { pays: undefined, reason: 'reads not measured' };
  const u = assumptions.targetUtilization;
  if ((writeCores + readCores) / u <= assumptions.maxDatabaseCores)
    return { pays: false, reason: 'primary takes both' };
  const readsPerReplica = assumptions.maxDatabaseCores * u - writeCores;
  // A replica replays the writes too: one that writes alone fill cannot serve reads either.
  if (readsPerReplica <= 0) return { pays: false, reason: 'writes alone fill the primary' };
  const replicas = Math.ceil(readCores / readsPerReplica);
  return {
    pays: true,
    reason: 'primary too small for both',
    replicas,
    coresPerReplica: Math.ceil((writeCores + readCores / replicas) / u),
  };
}

const us = 1e-6;

function replicasFor(cores: number, utilization: number, minimum: number): number {
  return Math.max(minimum, Math.ceil(cores / utilization));
}

/** The plan for `fleet`; every cost from `costs`, every other choice from `assumptions`. */
export function planCapacity(
  fleet: FleetShape,
  costs: CapacityCosts,
  assumptions: PlanAssumptions = defaultAssumptions,
): CapacityPlan {
  const f = costs.figures;
  const hostSamplesPerSecond = fleet.hosts / fleet.intervalSeconds;
  const samplesPerSecond = hostSamplesPerSecond * fleet.metricsPerHost;
  const requestsPerSecond = hostSamplesPerSecond / fleet.hostsPerRequest;
  const rulesPerSample = fleet.rules / fleet.metricsPerHost;
  const evaluationsPerSecond = samplesPerSecond * rulesPerSample;
  const u = assumptions.targetUtilization;

  const gatewayCores =
    (requestsPerSecond * f.gatewayCpuUsPerRequest.value +
      samplesPerSecond * f.gatewayCpuUsPerSample.value) *
    us;
  const gatewayReplicas = replicasFor(gatewayCores, u, 2);
  const writerCores =
    (hostSamplesPerSecond * f.writerCpuUsPerHostSample.value +
      samplesPerSecond * f.writerCpuUsPerRow.value) *
    us;
  const writerReplicas = replicasFor(writerCores, u, 2);
  const evaluatorCores =
    (hostSamplesPerSecond * f.evaluatorCpuUsPerHostSample.value +
      evaluationsPerSecond * f.evaluatorCpuUsPerSampleRule.value) *
    us;
  const evaluatorReplicas = replicasFor(evaluatorCores, u, 2);
  // Partitions are fixed when the topic is created and cap the consumers of each group: room
  // for twice the consumers this load needs.
  const consumersNeeded = Math.max(writerReplicas * writerConsumersPerReplica, evaluatorReplicas);
  const unshardedPartitions = Math.max(minimumPartitions, 2 * consumersNeeded);

  const ingressBytesPerSecond =
    requestsPerSecond * f.busBytesPerRequest.value + samplesPerSecond * f.busBytesPerSample.value;
  // Each replica of a record costs its broker about what the leader's copy costs.
  const kafkaCores =
    samplesPerSecond * f.kafkaCpuUsPerSample.value * us * assumptions.replicationFactor;
  const brokers = Math.max(
    assumptions.replicationFactor,
    Math.ceil(kafkaCores / (assumptions.brokerCores * u)),
  );
  const kafkaDiskBytes =
    ingressBytesPerSecond * assumptions.replicationFactor * assumptions.topicRetentionDays * 86_400;

  const databaseCores =
    (hostSamplesPerSecond * f.postgresCpuUsPerHostSample.value +
      samplesPerSecond * f.postgresCpuUsPerRow.value) *
    us;
  // TimescaleDB's sizing rule: the chunk being written within a quarter of memory. That chunk
  // is a head chunk now, unindexed: writes touch only its last pages, but compression and
  // reads of the newest minutes read the whole of it, so it is sized as the rule asks.
  const memoryGB =
    (4 * samplesPerSecond * headChunkHours * 3_600 * f.rawBytesPerRowUncompressed.value) / 1e9;
  const disk = steadyStateDisk(fleet, costs, assumptions);
  const readCores = fleet.databaseReadCores ?? 0;
  const readReplica = readReplicaVerdict(databaseCores, fleet.databaseReadCores, assumptions);
  // The primary and its standbys serve the reads unless replicas take them.
  const coresPerNode = Math.max(
    1,
    Math.ceil((databaseCores + (readReplica.pays === true ? 0 : readCores)) / u),
  );
  const diskGB = disk.rawGB + disk.tier5mGB + disk.tier1hGB + disk.seriesGB;
  const nodes = 1 + assumptions.databaseStandbys;
  const fitsOnePrimary =
    databaseCores / u <= assumptions.maxDatabaseCores &&
    memoryGB <= assumptions.maxDatabaseMemoryGB;
  const shardedCores = databaseCores * f.shardPostgresCpuFactor.value;
  const shardCount = fitsOnePrimary
    ? 1
    : Math.max(
        2,
        Math.ceil(shardedCores / u / assumptions.maxDatabaseCores),
        Math.ceil(memoryGB / assumptions.maxDatabaseMemoryGB),
      );
  // Every shard the same number of partitions, so each takes an equal share of the hosts.
  const partitions = Math.ceil(Math.max(unshardedPartitions, shardCount) / shardCount) * shardCount;
  const replicas = readReplica.pays === true ? readReplica.replicas : 0;
  const replicaCores = readReplica.pays === true ? readReplica.coresPerReplica : 0;

  return {
    samplesPerSecond,
    hostSamplesPerSecond,
    requestsPerSecond,
    evaluationsPerSecond,
    gateway: {
      cores: gatewayCores,
      replicas: gatewayReplicas,
      memoryMiB: gatewayReplicas * f.gatewayRssMiB.value,
    },
    redis: { cores: requestsPerSecond * f.redisCpuUsPerRequest.value * us },
    kafka: {
      brokers,
      cores: kafkaCores,
      partitions,
      ingressMBps: ingressBytesPerSecond / 1e6,
      diskGB: kafkaDiskBytes / 1e9,
    },
    writer: {
      cores: writerCores,
      replicas: writerReplicas,
      memoryMiB: writerReplicas * f.writerRssMiB.value,
    },
    evaluator: { cores: evaluatorCores, replicas: evaluatorReplicas },
    database: {
      cores: databaseCores,
      readCores,
      coresPerNode,
      memoryGB,
      headChunkMinutes: headChunkHours * 60,
      diskGB,
      disk,
      rawMultiple: diskGB / disk.rawGB,
      bytesPerSample: (diskGB * 1e9) / (samplesPerSecond * fleet.retentionDays * 86_400),
      fitsOnePrimary,
      shards: {
        count: shardCount,
        postgresCpuFactor: fitsOnePrimary ? 1 : f.shardPostgresCpuFactor.value,
        coresPerNode: Math.max(
          1,
          Math.ceil((fitsOnePrimary ? databaseCores : shardedCores) / shardCount / u),
        ),
        memoryGB: memoryGB / shardCount,
        diskGB: diskGB / shardCount,
      },
      nodes,
      total: {
        cores: nodes * coresPerNode + replicas * replicaCores,
        memoryGB: (nodes + replicas) * memoryGB,
        diskGB: (nodes + replicas) * diskGB,
      },
      readReplica,
    },
  };
}

/**
 * The database's disk once every retention is reached, per series: raw samples in head chunks
 * for the chunk being written and its wait for the job, then merged into compressed chunks not
 * yet consolidated, then consolidated (each at its fullest, not on average: disk is sized for
 * the peak); `samples_1m` and `samples_1h` not at all (retired by migrations 36 and 37: what
 * they held ages out); each kept tier from
 * shortly before the raw retention to its own, compressed but for the chunk being filled.
 */
function steadyStateDisk(
  fleet: FleetShape,
  costs: CapacityCosts,
  assumptions: PlanAssumptions,
): CapacityPlan['database']['disk'] {
  const f = costs.figures;
  const series = fleet.hosts * fleet.metricsPerHost;
  const samplesPerHour = 3_600 / fleet.intervalSeconds;
  const rawHours = fleet.retentionDays * 24;
  const headHours = Math.min(
    rawHours,
    headChunkHours + assumptions.compressAfterHours + assumptions.jobIntervalHours,
  );
  const mergedHours = Math.min(rawHours - headHours, assumptions.mergedHours);
  // A merged batch costs about the same whatever it holds: one per head chunk.
  const raw =
    samplesPerHour *
      ((rawHours - headHours - mergedHours) * f.rawBytesPerSampleCompressed.value +
        headHours * f.rawBytesPerRowUncompressed.value) +
    (mergedHours / headChunkHours) * f.rawBytesPerMergedBatch.value;
  const tier = (
    widthHours: number,
    retentionDays: number,
    chunkHours: number,
    perRow: { compressed: Figure; uncompressed: Figure },
  ): number => {
    const tierHours = retentionDays * 24;
    const heldHours =
      Math.min(
        tierHours,
        Math.max(0, tierHours - rawHours) + assumptions.tierFillBeforeRawRetentionHours,
      ) + chunkHours;
    const uncompressedHours = Math.min(heldHours, assumptions.tierUncompressedHours);
    return (
      ((heldHours - uncompressedHours) * perRow.compressed.value +
        uncompressedHours * perRow.uncompressed.value) /
      widthHours
    );
  };
  const tier5m = tier(5 / 60, fleet.rollup1mRetentionDays, assumptions.tier5mChunkHours, {
    compressed: f.tier5mBytesPerRowCompressed,
    uncompressed: f.tier5mBytesPerRowUncompressed,
  });
  const tier1h = tier(1, fleet.rollup1hRetentionDays, assumptions.tier1hChunkHours, {
    compressed: f.tier1hBytesPerRowCompressed,
    uncompressed: f.tier1hBytesPerRowUncompressed,
  });
  const gb = (bytesPerSeries: number): number => (series * bytesPerSeries) / 1e9;
  return {
    rawGB: gb(raw),
    tier5mGB: gb(tier5m),
    tier1hGB: gb(tier1h),
    seriesGB: gb(f.bytesPerSeries.value),
  };
}

/**
 * The samples per second the bench's machine should reach with the bench's workload (the Kafka
 * mode of bench:compare: gateway, writer, PostgreSQL, Kafka, Redis and the load generator on
 * `check.cores` cores, all busy), for comparing with what it measured.
 */
export function predictBenchThroughput(costs: CapacityCosts): number {
  const f = costs.figures;
  const { hostsPerRequest, metricsPerHost, cores } = costs.check;
  const samplesPerRequest = hostsPerRequest * metricsPerHost;
  const perRequestUs =
    f.gatewayCpuUsPerRequest.value +
    f.redisCpuUsPerRequest.value +
    f.loadGeneratorCpuUsPerRequest.value;
  const perHostSampleUs = f.writerCpuUsPerHostSample.value + f.postgresCpuUsPerHostSample.value;
  const perSampleUs =
    f.gatewayCpuUsPerSample.value +
    f.writerCpuUsPerRow.value +
    f.postgresCpuUsPerRow.value +
    f.kafkaCpuUsPerSample.value;
  const usPerSample =
    perRequestUs / samplesPerRequest + perHostSampleUs / metricsPerHost + perSampleUs;
  return (cores * 1e6) / usPerSample;
}
