import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import type { ServiceName } from '@monitor/testkit';
import { createTestDatabase, getFreePort, startServices } from '@monitor/testkit';
import type { BenchProcess, ProcessSpec } from './bench-process.js';
import { runToCompletion, startHttpProcess } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import { logProgress } from './harness/progress.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const tsxArgs = ['--import', 'tsx', '--conditions=development'];

/**
 * BENCH_NODE_FLAGS adds Node flags for a run, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` (a
 * profile per process, written as it exits): NODE_OPTIONS does not take --cpu-prof.
 */
const benchNodeFlags = process.env['BENCH_NODE_FLAGS'] ?? '';

/**
 * The image's entrypoint: it runs `monitor <role>` from the build with that role's Node flags,
 * so what users deploy is what is measured. Role `all` sets its consumers thread's heap itself
 * (CONSUMERS_SEMI_SPACE_MB, HEAP_GROWING_PERCENT).
 */
const monitorLauncher = fileURLToPath(new URL('../../server/bin/monitor.sh', import.meta.url));

/** Node's flags for `monitor` from the sources (tsx): the launcher's for every role but `gateway`. */
const sourceNodeFlags = [
  '--max-semi-space-size=32',
  ...benchNodeFlags.split(' ').filter((flag) => flag !== ''),
];

/** Which `monitor` the stack runs: `dist` needs `npm run build` first. */
export type MonitorBuild = 'source' | 'dist';

/** How to run `monitor <args…>` from `build`: a process spec's command, arguments and cwd. */
export function monitorCommand(
  build: MonitorBuild,
  args: readonly string[],
): { command: string; program: string; args: string[]; cwd: string } {
  if (build === 'source') {
    const main = fileURLToPath(new URL('../../server/src/main.ts', import.meta.url));
    return {
      command: process.execPath,
      program: process.execPath,
      args: [...sourceNodeFlags, ...tsxArgs, main, ...args],
      cwd: repoRoot,
    };
  }
  // Through env(1): the spec's environment stays the monitor's own, and each exec keeps the pid.
  return {
    command: '/usr/bin/env',
    program: process.execPath,
    args: [
      `MONITOR_NODE=${process.execPath}`,
      `MONITOR_NODE_FLAGS=${benchNodeFlags}`,
      '/bin/sh',
      monitorLauncher,
      ...args,
    ],
    cwd: repoRoot,
  };
}

/**
 * Settings of the monitor processes that may be tuned from the benchmark's own environment
 * (batch sizes, poll intervals, pool sizes, role `all`'s heap), so a run can try a setting
 * without code changes.
 */
const passThroughEnv =
  /^(WRITER_|EVALUATOR_|CONSUMERS_|HEAP_GROWING_PERCENT$|INGEST_PRODUCE_|INGEST_PUBLISH_|DATABASE_POOL_MAX$|SAMPLES_TOPIC_PARTITIONS$|KAFKA_CLIENT_ID$|KAFKA_SESSION_TIMEOUT_MS$|KAFKA_HEARTBEAT_INTERVAL_MS$|SERVICE_STALE_AFTER_SECONDS$)/;

/** The variables of `env` whose names `keep` accepts. */
function pickEnv(env: NodeJS.ProcessEnv, keep: (name: string) => boolean): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && keep(name)) picked[name] = value;
  }
  return picked;
}

/** The tunable settings (`passThroughEnv`) set in the benchmark's own environment. */
export function tunedMonitorEnv(): Record<string, string> {
  return pickEnv(process.env, (name) => passThroughEnv.test(name));
}

export type MonitorStack = {
  /** Where each server came from, e.g. `{ postgres: 'native' }`. */
  readonly serviceOrigins: Record<string, string>;
  /** The run's own fresh, migrated database (the control database and shard s0 when sharded). */
  readonly databaseUrl: string;
  /** Every sample shard's URL in SAMPLE_SHARDS order: `[databaseUrl]` unless sharded. */
  readonly sampleShardUrls: readonly string[];
  /** The environment every monitor process gets (plus its PORT). */
  readonly env: Readonly<Record<string, string>>;
  /** A small pool on the run's database, for seeding and checks. */
  readonly db: Database;
  /**
   * Starts `monitor <role>` on a free port and waits until its /healthz answers; `name` (the
   * role by default) names its log, so a second process of a role keeps a log of its own.
   */
  startRole(
    role: string,
    options?: { extraEnv?: Record<string, string>; name?: string },
  ): Promise<BenchProcess>;
  /**
   * Starts the roles side by side, pushing each to `started` once it is up (so its log is
   * scanned); when one fails, throws after the others have settled, so none starts unnoticed.
   */
  startRoles<const R extends readonly string[]>(
    roles: R,
    started: BenchProcess[],
  ): Promise<{ -readonly [I in keyof R]: BenchProcess }>;
  /** Starts a TypeScript script under tsx and the watchdog (for ceilings such as a bare server). */
  startNodeProcess(spec: {
    name: string;
    args: string[];
    env: Record<string, string>;
    readyPath: string;
  }): Promise<BenchProcess>;
};

/**
 * The stack of a benchmark that drives the ingest pipeline, and the headers its requests carry:
 * its processes get a bootstrap key to send with, a topic of the run's own, and a rate limit the
 * load never reaches.
 */
export async function startPipelineStack(options: {
  cleanup: Cleanup;
  logDir: string;
  databasePrefix: string;
  build?: MonitorBuild;
  database?: DatabaseServer;
  sampleShards?: SampleShardDatabases;
  /**
   * The database server testkit starts when `database` names none: TimescaleDB (default), as
   * deployments run it, or plain PostgreSQL.
   */
  storage?: 'timescale' | 'postgres';
}): Promise<{ stack: MonitorStack; headers: Record<string, string> }> {
  const apiKey = `mon_bench_${randomBytes(16).toString('hex')}`;
  const stack = await startMonitorStack({
    ...options,
    services:
      options.database === undefined
        ? [options.storage ?? 'timescale', 'kafka', 'redis']
        : ['kafka', 'redis'],
    env: {
      SAMPLES_TOPIC: `bench-samples-${randomBytes(4).toString('hex')}`,
      MONITOR_BOOTSTRAP_API_KEY: apiKey,
      // Far above anything this machine can send, so the rate limiter never answers 429.
      INGEST_RATE_LIMIT_PER_MINUTE: '1000000000',
    },
  });
  return { stack, headers: { 'content-type': 'application/json', 'x-api-key': apiKey } };
}

/**
 * A PostgreSQL server the stack does not start (a Patroni cluster): the run's database is
 * created through `serverUrl`, and the monitor processes get `clientUrl(database URL)` (both
 * hosts, read-write wanted) while the stack's own pool keeps to the same.
 */
export type DatabaseServer = {
  serverUrl: string;
  clientUrl(databaseUrl: string): string;
};

/**
 * Sample shards beside the run's database (shard s0, the control database): `create` makes the
 * databases of s1, s2, … (given the stack's server, registering their removal with `cleanup`)
 * and returns their client URLs; partition p goes to shard `p % count` of the `partitions`.
 */
export type SampleShardDatabases = {
  create(serverUrl: string, cleanup: Cleanup): Promise<string[]>;
  partitions: number;
};

/**
 * PostgreSQL (and Kafka, Redis when asked) from testkit or the environment, a fresh database,
 * `monitor migrate`, and a way to start roles as separate processes. Everything it starts is
 * registered with `cleanup`.
 */
export async function startMonitorStack(options: {
  services: ServiceName[];
  cleanup: Cleanup;
  /** Directory for the processes' output. */
  logDir: string;
  /** Prefix of the database's name. */
  databasePrefix: string;
  /** Added to every monitor process's environment. */
  env: Record<string, string>;
  /** The sources through tsx (default), or the built service. */
  build?: MonitorBuild;
  /** The database server, when not one of `services`. */
  database?: DatabaseServer;
  sampleShards?: SampleShardDatabases;
}): Promise<MonitorStack> {
  const { cleanup, logDir } = options;
  const build = options.build ?? 'source';
  const started = await startServices(options.services, { log: (m) => logProgress(m) });
  cleanup.add('services', () => started.stop());
  const serviceOrigins: Record<string, string> = {};
  for (const service of started.services) serviceOrigins[service.name] = service.origin;
  const serverUrl =
    options.database?.serverUrl ?? started.env['DATABASE_URL'] ?? started.env['TIMESCALE_URL'];
  if (serverUrl === undefined) throw new Error('testkit gave no DATABASE_URL or TIMESCALE_URL');

  const database = await createTestDatabase(serverUrl, options.databasePrefix);
  cleanup.add(`database ${database.name}`, () => database.drop());
  logProgress(`database ${database.name} created`);
  const databaseUrl = options.database?.clientUrl(database.url) ?? database.url;
  const sampleShardUrls = [
    databaseUrl,
    ...((await options.sampleShards?.create(serverUrl, cleanup)) ?? []),
  ];

  const env: Record<string, string> = {
    ...tunedMonitorEnv(),
    ...pickEnv(process.env, (name) => ['PATH', 'HOME'].includes(name)),
    ...pickEnv(started.env, (name) => ['KAFKA_BROKERS', 'REDIS_URL'].includes(name)),
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
    ...(sampleShardUrls.length === 1
      ? {}
      : {
          SAMPLE_SHARDS: JSON.stringify(sampleShardUrls.map((url, i) => ({ name: `s${i}`, url }))),
          SAMPLES_TOPIC_PARTITIONS: String(options.sampleShards?.partitions),
        }),
    ...options.env,
  };

  logProgress('migrating');
  await runToCompletion(
    { name: 'migrate', ...monitorCommand(build, ['migrate']), env, logDir },
    (running) => cleanup.add('migrate', () => running.stop()),
  );
  for (let shard = 1; shard < sampleShardUrls.length; shard++) {
    const partitions = Array.from({ length: options.sampleShards?.partitions ?? 0 }, (_, p) => p);
    const placed = partitions.filter((p) => p % sampleShardUrls.length === shard);
    await runToCompletion(
      {
        name: `shards-add-s${shard}`,
        ...monitorCommand(build, ['shards', 'add', `s${shard}`, '--partitions', placed.join(',')]),
        env,
        logDir,
      },
      (running) => cleanup.add('shards add', () => running.stop()),
    );
  }

  const db = createDatabase({
    url: databaseUrl,
    maxConnections: 2,
    applicationName: 'monitor-bench',
  });
  cleanup.add('database pool', () => db.close());

  /** `spec` under the watchdog on a free port (its PORT), once GET `readyPath` answers. */
  const startOnFreePort = async (
    spec: Omit<ProcessSpec, 'logDir'>,
    readyPath: string,
  ): Promise<BenchProcess> => {
    const port = await getFreePort();
    const proc = await startHttpProcess({
      ...spec,
      env: { ...spec.env, PORT: String(port) },
      logDir,
      port,
      readyPath,
    });
    cleanup.add(spec.name, () => proc.stop());
    return proc;
  };
  const startRole: MonitorStack['startRole'] = (role, { extraEnv = {}, name = role } = {}) =>
    startOnFreePort(
      { name, ...monitorCommand(build, [role]), env: { ...env, ...extraEnv } },
      '/healthz',
    );
  return {
    serviceOrigins,
    databaseUrl,
    sampleShardUrls,
    env,
    db,
    startRole,
    async startRoles(roles, started) {
      const results = await Promise.allSettled(
        roles.map(async (role) => {
          const proc = await startRole(role);
          started.push(proc);
          return proc;
        }),
      );
      return results.map((result) => {
        if (result.status === 'rejected') throw result.reason;
        return result.value;
      }) as { -readonly [I in keyof typeof roles]: BenchProcess };
    },
    startNodeProcess: (spec) =>
      startOnFreePort(
        {
          name: spec.name,
          command: process.execPath,
          args: [...tsxArgs, ...spec.args],
          cwd: repoRoot,
          env: spec.env,
        },
        spec.readyPath,
      ),
  };
}
