/**
 * `npm run capacity -- --hosts 1000000 --metrics 100 --interval 15s --retention 30d`: how many
 * gateways, Kafka brokers and partitions, writers and evaluators, and how much TimescaleDB for a
 * fleet, from the measured costs in docs/capacity-costs.json (docs/capacity.md walks through it).
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import type { CapacityPlan, FleetShape, PlanAssumptions } from './capacity-plan.js';
import {
  defaultAssumptions,
  parseCapacityCosts,
  planCapacity,
  predictBenchThroughput,
} from './capacity-plan.js';

const costsFile = new URL('../../../docs/capacity-costs.json', import.meta.url);

const usage = `Usage: npm run capacity -- --hosts N [options]
  --hosts N               monitored hosts (required)
  --metrics N             metrics per host sample (default 10)
  --interval D            how often each host sends, e.g. 15s, 1m (default 15s)
  --retention D           raw sample retention, e.g. 30d (default 30d)
  --rules N               alert rules, spread over the metrics (default 100)
  --hosts-per-request N   hosts per ingest request (default 1: each agent sends its own)
  --max-db-cores N        the largest TimescaleDB primary you would run (default ${defaultAssumptions.maxDatabaseCores})
  --broker-cores N        cores per Kafka broker (default ${defaultAssumptions.brokerCores})
Costs: docs/capacity-costs.json (each figure names the benchmark run it comes from).`;

/** `15s`, `1m`, `2h`, `30d` (or a bare number of the default unit) in seconds. */
function durationSeconds(name: string, text: string, defaultUnit: 's' | 'd'): number {
  const match = /^(\d+(?:\.\d+)?)(s|m|h|d)?$/.exec(text.trim());
  if (match === null) throw new Error(`--${name} must look like 15s, 5m, 2h or 30d`);
  const factor = { s: 1, m: 60, h: 3_600, d: 86_400 }[match[2] ?? defaultUnit] ?? 1;
  const seconds = Number(match[1]) * factor;
  if (!(seconds > 0)) throw new Error(`--${name} must be above zero`);
  return seconds;
}

function positiveInteger(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name} must be a positive integer`);
  return n;
}

const fmt = (n: number, digits = 0): string =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function formatPlan(fleet: FleetShape, plan: CapacityPlan, assumptions: PlanAssumptions): string {
  const db = plan.database;
  const lines = [
    `Fleet: ${fmt(fleet.hosts)} hosts × ${fleet.metricsPerHost} metrics every ${fleet.intervalSeconds} s, ` +
      `${fleet.retentionDays} days kept, ${fmt(fleet.rules)} rules`,
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
    `TimescaleDB     ${fmt(Math.ceil(db.cores / assumptions.targetUtilization))} cores ` +
      `(${fmt(db.cores, 1)} of work), ${fmt(db.memoryGB)} GB memory ` +
      `(chunks of ${db.chunkIntervalHours} h), ` +
      `${fmt(db.diskGB)} GB disk${db.diskCompressed ? '' : ' (uncompressed: an upper bound)'}`,
    '',
    `Replicas and cores at ${assumptions.targetUtilization * 100} % of a core each (two of every role at least, ` +
      `for failover); partitions leave room for twice the consumers.`,
  ];
  if (!db.fitsOnePrimary) {
    lines.push(
      `Beyond one TimescaleDB primary of ${assumptions.maxDatabaseCores} cores and ` +
        `${assumptions.maxDatabaseMemoryGB} GB: see docs/capacity.md, ` +
        '"Where the design stops scaling".',
    );
  }
  return lines.join('\n');
}

function main(): void {
  const { values } = parseArgs({
    options: {
      hosts: { type: 'string' },
      metrics: { type: 'string', default: '10' },
      interval: { type: 'string', default: '15s' },
      retention: { type: 'string', default: '30d' },
      rules: { type: 'string', default: '100' },
      'hosts-per-request': { type: 'string', default: '1' },
      'max-db-cores': { type: 'string', default: String(defaultAssumptions.maxDatabaseCores) },
      'broker-cores': { type: 'string', default: String(defaultAssumptions.brokerCores) },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help || values.hosts === undefined) {
    process.stdout.write(`${usage}\n`);
    process.exit(values.help ? 0 : 2);
  }
  const fleet: FleetShape = {
    hosts: positiveInteger('hosts', values.hosts),
    metricsPerHost: positiveInteger('metrics', values.metrics),
    intervalSeconds: durationSeconds('interval', values.interval, 's'),
    retentionDays: durationSeconds('retention', values.retention, 'd') / 86_400,
    rules: Number(values.rules),
    hostsPerRequest: positiveInteger('hosts-per-request', values['hosts-per-request']),
  };
  if (!Number.isInteger(fleet.rules) || fleet.rules < 0)
    throw new Error('--rules must be a non-negative integer');
  const assumptions: PlanAssumptions = {
    ...defaultAssumptions,
    maxDatabaseCores: positiveInteger('max-db-cores', values['max-db-cores']),
    brokerCores: positiveInteger('broker-cores', values['broker-cores']),
  };
  const costs = parseCapacityCosts(JSON.parse(readFileSync(costsFile, 'utf8')));
  process.stdout.write(
    `${formatPlan(fleet, planCapacity(fleet, costs, assumptions), assumptions)}\n`,
  );
  const predicted = predictBenchThroughput(costs);
  process.stdout.write(
    `\nCheck: on ${costs.check.cores} cores the costs predict ${fmt(predicted)} samples/s for ` +
      `${costs.check.bench}; it measured ${fmt(costs.check.samplesPerSecond)} (${costs.check.date}), ` +
      `${fmt((predicted / costs.check.samplesPerSecond - 1) * 100, 1)} %.\n`,
  );
}

try {
  main();
} catch (err) {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n\n${usage}\n`);
  process.exit(2);
}
