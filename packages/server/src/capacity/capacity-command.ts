/**
 * `monitor capacity --hosts 1000000 --metrics 100 --interval 15s --retention 30d`: how many
 * gateways, Kafka brokers and partitions, writers and evaluators, and how much TimescaleDB for a
 * fleet, from the measured costs in capacity-costs.json (docs/capacity.md walks through it).
 * Reads no configuration and opens no connection.
 */
import { Command, InvalidArgumentError } from 'commander';
import { defaultStoragePolicies } from '@monitor/db';
import costsJson from './capacity-costs.json' with { type: 'json' };
import type { CapacityPlan, FleetShape, PlanAssumptions } from './capacity-plan.js';
import {
  defaultAssumptions,
  parseCapacityCosts,
  planCapacity,
  predictBenchThroughput,
} from './capacity-plan.js';

/** `15s`, `1m`, `2h`, `30d` (or a bare number of the default unit) in seconds. */
function durationSeconds(text: string, defaultUnit: 's' | 'd'): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)?$/.exec(text.trim());
  if (match === null) throw new InvalidArgumentError('must look like 15s, 5m, 2h or 30d');
  const factor = { s: 1, m: 60, h: 3_600, d: 86_400 }[match[2] ?? defaultUnit] ?? 1;
  const seconds = Number(match[1]) * factor;
  if (!(seconds > 0)) throw new InvalidArgumentError('must be above zero');
  return seconds;
}

function positiveInteger(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

function nonNegativeInteger(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0)
    throw new InvalidArgumentError('must be a non-negative integer');
  return n;
}

function nonNegativeNumber(text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || n < 0)
    throw new InvalidArgumentError('must be a non-negative number');
  return n;
}

const days = (text: string): number => durationSeconds(text, 'd') / 86_400;

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function formatPlan(fleet: FleetShape, plan: CapacityPlan, assumptions: PlanAssumptions): string {
  const db = plan.database;
  const lines = [
    `Fleet: ${fmt(fleet.hosts)} hosts × ${fleet.metricsPerHost} metrics every ${fleet.intervalSeconds} s, ` +
      `raw samples kept ${fleet.retentionDays} days (the 5-minute tier ` +
      `${fleet.rollup1mRetentionDays}, the 1-hour tier ${fleet.rollup1hRetentionDays}), ${fmt(fleet.rules)} rules`,
    `  ${fmt(plan.samplesPerSecond)} samples/s in ${fmt(plan.requestsPerSecond)} requests/s ` +
      `(${fmt(plan.hostSamplesPerSecond)} host samples/s)`,
    '',
    `Gateways        ${fmt(plan.gateway.replicas)} replicas (${fmt(plan.gateway.cores, 1)} cores of work, ` +
      `${fmt(plan.gateway.memoryMiB / 1024, 1)} GiB), Redis ${fmt(plan.redis.cores, 2)} cores`,
    `Kafka           ${plan.kafka.brokers} brokers of ${assumptions.brokerCores} cores ` +
      `(${fmt(plan.kafka.cores, 1)} cores of work at replication ${assumptions.replicationFactor}), ` +
      `${plan.kafka.partitions} partitions, ${fmt(plan.kafka.ingressMBps, 1)} MB/s in, ` +
      `${fmt(plan.kafka.diskGB)} GB disk (${assumptions.topicRetentionDays} days × ${assumptions.replicationFactor})`,
    `Writers         ${fmt(plan.writer.replicas)} replicas (${fmt(plan.writer.cores, 1)} cores of work, ` +
      `${fmt(plan.writer.memoryMiB / 1024, 1)} GiB)`,
    `Evaluators      ${fmt(plan.evaluator.replicas)} replicas (${fmt(plan.evaluator.cores, 1)} cores of work): ` +
      `${fmt(plan.evaluationsPerSecond)} rule evaluations/s`,
    `TimescaleDB     ${db.nodes === 1 ? 'one node' : `${db.nodes} nodes (a primary, ${db.nodes - 1} ${db.nodes === 2 ? 'standby' : 'standbys'})`} ` +
      `of ${fmt(db.coresPerNode)} ${db.coresPerNode === 1 ? 'core' : 'cores'} (${fmt(db.cores, 1)} of writes` +
      (db.readCores > 0 && db.readReplica.pays !== true
        ? ` and ${fmt(db.readCores, 1)} of reads`
        : '') +
      `), ${fmt(db.memoryGB)} GB memory ` +
      `(head chunks of ${db.headChunkMinutes} min), ${fmt(db.diskGB)} GB disk ` +
      `(${fmt(db.bytesPerSample, 2)} bytes per raw sample, the tiers kept longer included, ` +
      `${fmt(db.rawMultiple, 2)} × the raw samples' disk): raw ${fmt(db.disk.rawGB)}, ` +
      `5-minute tier ${fmt(db.disk.tier5mGB)}, 1-hour tier ${fmt(db.disk.tier1hGB)}, ` +
      `series ${fmt(db.disk.seriesGB, 1)}`,
    `                ${db.nodes === 1 ? 'no standby: a dead primary stops storage and alerting (--database-standbys 1 for HA)' : 'every node a whole copy'}; ` +
      `${fmt(db.total.cores)} cores, ${fmt(db.total.memoryGB)} GB memory, ${fmt(db.total.diskGB)} GB disk in all`,
    `Read replica    ${readReplicaLine(plan, assumptions)}`,
    '',
    `Replicas and cores at ${assumptions.targetUtilization * 100} % of a core each (two of every role at least, ` +
      `for failover); partitions leave room for twice the consumers.`,
  ];
  if (!db.fitsOnePrimary) {
    const { shards } = db;
    lines.push(
      `Beyond one TimescaleDB primary of ${assumptions.maxDatabaseCores} cores and ` +
        `${assumptions.maxDatabaseMemoryGB} GB: ${shards.count} sample shards (SAMPLE_SHARDS), ` +
        `${plan.kafka.partitions / shards.count} partitions each, every shard ${db.nodes === 1 ? 'a node' : `${db.nodes} nodes`} of ` +
        `${fmt(shards.coresPerNode)} cores, ${fmt(shards.memoryGB)} GB memory and ` +
        `${fmt(shards.diskGB)} GB disk (a shard's PostgreSQL costs ` +
        `${shards.postgresCpuFactor} × one database's CPU per sample, measured; ` +
        'docs/operations.md, "Sample shards").',
    );
  }
  return lines.join('\n');
}

/** The read-replica rule, what it says for this plan, and reading from the standby. */
function readReplicaLine(plan: CapacityPlan, assumptions: PlanAssumptions): string {
  const db = plan.database;
  const rule =
    'a replica is a whole copy that replays every write, so it pays only once writes and reads ' +
    `no longer fit the largest primary (--max-db-cores ${assumptions.maxDatabaseCores} at ` +
    `${assumptions.targetUtilization * 100} %); until then give the primary the cores`;
  const standby =
    assumptions.databaseStandbys > 0
      ? '. Reads may go to the standby (DATABASE_READ_URL), no machine of its own, stale by its replay lag'
      : '';
  const verdict = db.readReplica;
  switch (verdict.reason) {
    case 'reads not measured':
      return `${rule}: pass --database-read-cores (the primary's CPU on reads, measured)${standby}`;
    case 'primary takes both':
      return `none: ${fmt(db.cores, 1)} cores of writes and ${fmt(db.readCores, 1)} of reads fit one primary (${rule})${standby}`;
    case 'writes alone fill the primary':
      return `none would help: the writes alone fill the largest primary (see "Where the design stops scaling")`;
    case 'primary too small for both':
      return `${verdict.replicas} of ${verdict.coresPerReplica} cores pay for themselves: ${fmt(db.readCores, 1)} cores of reads beside ${fmt(db.cores, 1)} of writes (${rule})`;
  }
}

type CapacityOptions = {
  hosts: number;
  metrics: number;
  interval: number;
  retention: number;
  rollup1mRetention: number;
  rollup1hRetention: number;
  rules: number;
  hostsPerRequest: number;
  maxDbCores: number;
  brokerCores: number;
  databaseStandbys: number;
  databaseReadCores?: number;
};

export function createCapacityCommand(write: (text: string) => void): Command {
  return new Command('capacity')
    .description(
      'plan replicas, cores, memory and disk for a fleet, from measured costs (docs/capacity.md)',
    )
    .requiredOption('--hosts <n>', 'monitored hosts', positiveInteger)
    .option('--metrics <n>', 'metrics per host sample', positiveInteger, 10)
    .option(
      '--interval <duration>',
      'how often each host sends, e.g. 15s, 1m',
      (text) => durationSeconds(text, 's'),
      15,
    )
    .option(
      '--retention <duration>',
      'raw sample retention, e.g. 30d',
      days,
      defaultStoragePolicies.rawRetentionDays,
    )
    .option(
      '--rollup-1m-retention <duration>',
      '5-minute tier retention (ROLLUP_1M_RETENTION_DAYS)',
      days,
      defaultStoragePolicies.rollup1mRetentionDays,
    )
    .option(
      '--rollup-1h-retention <duration>',
      '1-hour tier retention (ROLLUP_1H_RETENTION_DAYS)',
      days,
      defaultStoragePolicies.rollup1hRetentionDays,
    )
    .option('--rules <n>', 'alert rules, spread over the metrics', nonNegativeInteger, 100)
    .option(
      '--hosts-per-request <n>',
      'hosts per ingest request (1: each agent sends its own)',
      positiveInteger,
      1,
    )
    .option(
      '--max-db-cores <n>',
      'the largest TimescaleDB primary you would run',
      positiveInteger,
      defaultAssumptions.maxDatabaseCores,
    )
    .option(
      '--database-standbys <n>',
      'TimescaleDB standbys beside the primary, each a whole copy (0: no HA)',
      nonNegativeInteger,
      defaultAssumptions.databaseStandbys,
    )
    .option(
      '--database-read-cores <n>',
      'cores the primary spends on reads, as measured (decides whether a read replica pays)',
      nonNegativeNumber,
    )
    .option(
      '--broker-cores <n>',
      'cores per Kafka broker',
      positiveInteger,
      defaultAssumptions.brokerCores,
    )
    .action((options: CapacityOptions) => {
      const fleet: FleetShape = {
        hosts: options.hosts,
        metricsPerHost: options.metrics,
        intervalSeconds: options.interval,
        retentionDays: options.retention,
        rollup1mRetentionDays: options.rollup1mRetention,
        rollup1hRetentionDays: options.rollup1hRetention,
        rules: options.rules,
        hostsPerRequest: options.hostsPerRequest,
        databaseReadCores: options.databaseReadCores,
      };
      const assumptions: PlanAssumptions = {
        ...defaultAssumptions,
        maxDatabaseCores: options.maxDbCores,
        brokerCores: options.brokerCores,
        databaseStandbys: options.databaseStandbys,
      };
      const costs = parseCapacityCosts(costsJson);
      write(`${formatPlan(fleet, planCapacity(fleet, costs, assumptions), assumptions)}\n`);
      const predicted = predictBenchThroughput(costs);
      write(
        `\nCheck: on ${costs.check.cores} cores the costs predict ${fmt(predicted)} samples/s for ` +
          `${costs.check.bench}; it measured ${fmt(costs.check.samplesPerSecond)} ` +
          `(${costs.check.date}), ${fmt((predicted / costs.check.samplesPerSecond - 1) * 100, 1)} %.\n`,
      );
    });
}
