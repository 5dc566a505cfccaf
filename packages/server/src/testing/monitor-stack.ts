import { randomBytes } from 'node:crypto';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import { createTestDatabase, receiverNetwork } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { ApiTarget } from './api-target.js';
import type { RoleProcess } from './role-process.js';
import { runCommand, startRoleProcess } from './role-process.js';

export type MonitorStack = {
  /** A pool on the stack's (control) database, for assertions. */
  db: Database;
  /** Pools on the databases holding samples: `[db]`, or each sample shard's, `db` first. */
  sampleDbs: readonly Database[];
  env: Readonly<Record<string, string>>;
  /** Starts `monitor <role>` against the stack; stopped by `stop`. */
  start(role: string): Promise<RoleProcess>;
  /** Stops every role process (SIGTERM), closes the pool, drops the database. */
  stop(): Promise<void>;
};

/**
 * A fresh migrated PostgreSQL database and a new 6-partition samples topic on the suite's
 * Kafka (unless `bus` is `in-process`: then only role `all` makes sense), with settings that
 * keep the tests quick (short polls and retries) and let the notifier reach
 * the testkit's local notification receivers. `postgresUrl` and `kafkaBrokers` put the
 * stack on servers of the test's own (one it restarts) instead of the suite's. `sampleShards`
 * (3, say) makes it a sharded deployment: the control database is shard `s0`, each other shard
 * a database of its own, partitions placed round-robin (`p % n`) with `monitor shards add`
 * (but on the last `emptyShards`).
 */
export async function createMonitorStack(
  name: string,
  extraEnv: Record<string, string> = {},
  options: {
    bus?: 'kafka' | 'in-process';
    postgresUrl?: string;
    kafkaBrokers?: string;
    sampleShards?: number;
    /** Where shard s1, s2, … live (a server the test stops, say); the stack's server if unset. */
    shardServerUrls?: readonly string[];
    /** How many of the last shards get no partition (added later by the test). Default 0. */
    emptyShards?: number;
  } = {},
): Promise<MonitorStack> {
  const serverUrl = options.postgresUrl ?? serviceUrl('postgres');
  const testDb: TestDatabase = await createTestDatabase(serverUrl, name);
  const shardDbs: TestDatabase[] = [];
  for (let i = 1; i < (options.sampleShards ?? 1); i++) {
    shardDbs.push(
      await createTestDatabase(options.shardServerUrls?.[i - 1] ?? serverUrl, `${name}_s${i}`),
    );
  }
  const db = createDatabase({ url: testDb.url, maxConnections: 2 });
  const shardUrls = [testDb.url, ...shardDbs.map((shard) => shard.url)];
  const partitions = 6;
  const env = {
    DATABASE_URL: testDb.url,
    ...(shardDbs.length === 0
      ? {}
      : {
          SAMPLE_SHARDS: JSON.stringify(shardUrls.map((url, i) => ({ name: `s${i}`, url }))),
        }),
    ...(options.bus === 'in-process'
      ? {}
      : { KAFKA_BROKERS: options.kafkaBrokers ?? serviceUrl('kafka') }),
    SAMPLES_TOPIC: `samples-${randomBytes(4).toString('hex')}`,
    SAMPLES_TOPIC_PARTITIONS: String(partitions),
    WRITER_BATCH_MAX_WAIT_MS: '20',
    EVALUATOR_RULE_POLL_MS: '200',
    NOTIFIER_POLL_MS: '100',
    NOTIFIER_RETRY_BASE_MS: '200',
    INVESTIGATOR_POLL_MS: '100',
    // The tests' Slack and webhook receivers run on this machine.
    NOTIFIER_ALLOWED_TARGET_NETWORKS: receiverNetwork,
    ...extraEnv,
  };
  await runCommand(['migrate'], env);
  const placing = shardUrls.length - (options.emptyShards ?? 0);
  for (const [i] of shardDbs.entries()) {
    const placed = Array.from({ length: partitions }, (_, p) => p).filter(
      (p) => p % placing === i + 1,
    );
    if (placed.length === 0) continue;
    await runCommand(['shards', 'add', `s${i + 1}`, '--partitions', placed.join(',')], env);
  }
  const sampleDbs = [
    db,
    ...shardDbs.map((shard) => createDatabase({ url: shard.url, maxConnections: 2 })),
  ];
  const started: RoleProcess[] = [];
  return {
    db,
    sampleDbs,
    env,
    async start(role) {
      const proc = await startRoleProcess(role, env);
      started.push(proc);
      return proc;
    },
    async stop() {
      await Promise.all(started.map((proc) => proc.stop()));
      await Promise.all(sampleDbs.map((each) => each.close()));
      await testDb.drop();
      for (const shard of shardDbs) await shard.drop();
    },
  };
}

/** Resolves once the evaluator at `baseUrl` has loaded at least `count` rules (its /metrics). */
export async function evaluatorRulesLoaded(
  baseUrl: string,
  count: number,
  timeoutMs = 10_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const text = await (await fetch(`${baseUrl}/metrics`)).text();
    const match = /^evaluator_rules(?:\{[^}]*\})? (\d+)/m.exec(text);
    if (match !== null && Number(match[1]) >= count) return;
    if (Date.now() > deadline) throw new Error(`the evaluator did not load ${count} rules in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export type LocalApiTarget = ApiTarget & {
  stack: MonitorStack;
  /** Stops the role processes and drops the database. */
  stop(): Promise<void>;
};

/**
 * An `ApiTarget` of this checkout's role processes on a fresh stack: `kafka` runs gateway,
 * writer and api over the suite's Kafka; `embedded` runs the default, role `all` (every role,
 * the in-process bus) in one process.
 */
export async function startLocalApiTarget(
  name: string,
  mode: 'kafka' | 'embedded' | 'sharded',
  extraEnv: Record<string, string> = {},
): Promise<LocalApiTarget> {
  const stack = await createMonitorStack(`${name}_${mode}`, extraEnv, {
    bus: mode === 'embedded' ? 'in-process' : 'kafka',
    sampleShards: mode === 'sharded' ? 3 : 1,
  });
  try {
    if (mode !== 'embedded') {
      const [gateway, , api] = await Promise.all(
        ['gateway', 'writer', 'api'].map((role) => stack.start(role)),
      );
      return {
        stack,
        ingestUrl: gateway!.baseUrl,
        apiUrl: api!.baseUrl,
        db: stack.db,
        sampleDbs: stack.sampleDbs,
        stop: () => stack.stop(),
      };
    }
    const all = await stack.start('all');
    return {
      stack,
      ingestUrl: all.baseUrl,
      apiUrl: all.baseUrl,
      db: stack.db,
      sampleDbs: stack.sampleDbs,
      stop: () => stack.stop(),
    };
  } catch (error) {
    await stack.stop();
    throw error;
  }
}
