/**
 * `npm run bench:failover`: what a replica that goes away costs the alerts and the storage
 * (issue 28). Two writers and two evaluators over real Kafka under a steady load, with one probe
 * host per partition that sends a sample every second and measures, for each, sample → alert
 * visible (the evaluators) and acknowledged → queryable (the writers). Then, one after the other,
 * each followed by an observation window:
 *
 * 1. SIGKILL of a writer (a crash: the survivor waits for the session to expire);
 * 2. a new writer joins (what adding a replica costs: one rebalance; reported, no target);
 * 3. SIGKILL of an evaluator the moment a new evaluator has started (its first log line), so
 *    it joins while the group still waits for the dead member;
 * 4. SIGTERM of a writer and 5. of an evaluator (a goodbye: commit, leave, no session to wait).
 *
 * Per event it reports the stall: from the event until the last probe over max(1 s, twice the
 * p99 before the event) was visible, for both pipelines, and when each consumer joined with which
 * partitions (from their logs). The processes run with the defaults a user gets (the session and
 * heartbeat settings come from the environment only when set there). At the end it checks that
 * every acknowledged sample was stored.
 *
 * Steps: `start` brings up the stack (failover-target.ts); `measure` runs the roles scenario
 * (failover-roles.ts), `--scenario database` (failover-database.ts) or `--scenario shard`
 * (failover-shard.ts), each under the probed load of failover-load.ts.
 */
import { integerOption } from './harness/command-line.js';
import { measureDatabaseFailover } from './failover-database.js';
import { formatFailoverReport } from './failover-report.js';
import { measureShardFailover } from './failover-shard.js';
import { measureRoleFailover, targetStallMs } from './failover-roles.js';
import type { FailoverOptions } from './failover-target.js';
import { startFailoverTarget } from './failover-target.js';
import { runBench } from './harness/run-bench.js';

const usage = `Usage: npm run bench:failover -- [options]
  --scenario roles|database|shard  roles (default): writers and evaluators killed, joining,
                           leaving; database: the Patroni leader's node killed (its own
                           PostgreSQL); shard: three sample shards, s1's Patroni leader killed
  --hosts N                fleet hosts of the steady load (default 1000)
  --payloads-per-request N hosts per ingest request (default 50)
  --requests-per-second N  the load's pace (default 10)
  --baseline-seconds N     probing before the first event (default 20)
  --observe-seconds N      probing after each event (default 20)
  --step-interval-ms N     a probe sample per partition this often (default 1000)
  --poll-interval-ms N     how often a probe polls the API (default 100)
  --out FILE               JSON results (default bench-results/failover-<iso date>.json)
Services come from DATABASE_URL, KAFKA_BROKERS and REDIS_URL when set, else testkit starts them
(the database and shard scenarios always start their own Patroni cluster).
KAFKA_SESSION_TIMEOUT_MS, KAFKA_HEARTBEAT_INTERVAL_MS, WRITER_*, EVALUATOR_* and
SAMPLES_TOPIC_PARTITIONS are passed on to the monitor processes; unset, they keep their defaults.`;

function scenarioOption(value: string): FailoverOptions['scenario'] {
  if (value !== 'roles' && value !== 'database' && value !== 'shard')
    throw new Error('--scenario must be roles, database or shard');
  return value;
}

const measures = {
  roles: measureRoleFailover,
  database: measureDatabaseFailover,
  shard: measureShardFailover,
};

const targets: Record<FailoverOptions['scenario'], string> = {
  roles: `every kill and leave (a join is reported only): its pipeline back under max(1 s, 2 × p99 before) within ${targetStallMs / 1000} s; every acknowledged sample stored`,
  database:
    'storage and alerting resume within 30 s of the kill, storage within 1 s of the new primary accepting writes; the writer keeps its group membership (no rebalance); every acknowledged sample stored once; each alert fired once, the pending window included',
  shard:
    "the killed shard's partitions store and alert again within 30 s of the kill; no probe of the other shards over max(1 s, 2 × p99 before), and they store records while it is away; PromQL fails strictly (503) and answers with partial_response=true with a warning; every acknowledged sample stored once, on its partition's shard; each alert fired once",
};

await runBench({
  name: 'failover',
  usage,
  defaults: {
    scenario: 'roles',
    hosts: '1000',
    'payloads-per-request': '50',
    'requests-per-second': '10',
    'baseline-seconds': '20',
    'observe-seconds': '20',
    'step-interval-ms': '1000',
    'poll-interval-ms': '100',
  },
  parseOptions: (values): FailoverOptions => ({
    scenario: scenarioOption(values.scenario),
    hosts: integerOption('hosts', values.hosts),
    payloadsPerRequest: integerOption(
      'payloads-per-request',
      values['payloads-per-request'],
      1,
      700,
    ),
    requestsPerSecond: integerOption('requests-per-second', values['requests-per-second'], 1, 1000),
    baselineSeconds: integerOption('baseline-seconds', values['baseline-seconds'], 5),
    observeSeconds: integerOption('observe-seconds', values['observe-seconds'], 12),
    stepIntervalMs: integerOption('step-interval-ms', values['step-interval-ms'], 100),
    pollIntervalMs: integerOption('poll-interval-ms', values['poll-interval-ms'], 10),
  }),
  createReport: (options) => ({
    settings: {
      ...options,
      partitions: 0,
      kafkaSessionTimeoutMs: 'default',
      kafkaHeartbeatIntervalMs: 'default',
      origins: {},
    },
    events: [],
    target: {
      description: targets[options.scenario],
      met: false,
    },
  }),
  start: startFailoverTarget,
  measure: (target, context) => measures[context.options.scenario](target, context),
  format: formatFailoverReport,
});
