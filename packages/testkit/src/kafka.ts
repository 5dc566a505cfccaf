/**
 * A real Apache Kafka broker for tests: a testcontainer where Docker answers, otherwise the broker's
 * jars (resolved once from Maven Central into a cache outside the work tree) run with `java -cp`
 * as a single-node KRaft server (broker and controller in one JVM).
 *
 * Why Kafka 4.1 works with kafkajs 2.2.4: kafkajs first asks the broker for its ApiVersions and then
 * uses, per API, min(highest version kafkajs implements, highest version the broker supports); it
 * never looks at the broker's minimum. Kafka 4.0 (KIP-896) dropped the oldest protocol versions, so
 * the pairing works only while kafkajs's highest version stays at or above Kafka's new minimum for
 * every API it calls. In Kafka 4.1.1 (kafka-clients' message definitions) vs kafkajs 2.2.4:
 *   Produce 3-13 vs ≤7 → v7 · Fetch 4-18 vs ≤11 → v11 · ListOffsets 1-10 vs ≤3 → v3 ·
 *   OffsetCommit 2-10 vs ≤5 → v5 · OffsetFetch 1-10 vs ≤4 → v4 · CreateTopics 2-7 vs ≤3 → v3 ·
 *   DeleteTopics 1-6 vs ≤1 → v1 · DescribeConfigs 1-4 vs ≤2 → v2 · Metadata 0-13 vs ≤6 → v6 ·
 *   JoinGroup 0-9 vs ≤5 · SyncGroup 0-5 vs ≤3 · Heartbeat 0-4 vs ≤3 · FindCoordinator 0-6 vs ≤2 ·
 *   InitProducerId 0-6 vs ≤1.
 * Produce v3+ also means record batches (magic v2), the only message format Kafka 4 accepts, and
 * consumers join through the classic group protocol, which Kafka 4 still serves. A later Kafka
 * that raises a minimum above kafkajs's maximum (e.g. Fetch past v11) would break kafkajs; check
 * this table before bumping `kafka.version` in ../kafka/pom.xml.
 *
 * Why 127.0.0.1 and never `localhost`: the broker listens (and advertises, which is the address
 * clients reconnect to after bootstrapping) on 127.0.0.1 only, and `getFreePort` checked that
 * port on 127.0.0.1 only. `localhost` may resolve to ::1 first (Node ≥ 17 keeps the resolver's
 * order), where nothing listens or, worse, another process holds the same port number.
 */
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Kafka, logLevel } from 'kafkajs';
import { GenericContainer, Wait } from 'testcontainers';
import { containerImage } from './container-images.js';
import { getFreePort } from './free-port.js';
import type { RunningService, ServiceLauncher } from './service.js';
import type { RestartableProcess } from './restartable-process.js';
import { startRestartableProcess } from './restartable-process.js';
import { createServiceDir, markOwner } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';
import { startSupervised } from './supervised-process.js';

/** Confluent Platform 8.1 ships Apache Kafka 4.1, the line the native broker runs. */
/** The container's client listener; it is published on the same port number of the host. */
const containerClientPort = 9092;

const pomFile = fileURLToPath(new URL('../kafka/pom.xml', import.meta.url));
/** Written into the libs dir last, so a dir without it is a copy that did not finish. */
const markerName = '.complete';
const readyTopic = '__testkit_ready';
const readyGroup = '__testkit_ready';
const readyTimeoutMs = 90_000;
const formatTimeoutMs = 60_000;
const mvnTimeoutMs = 10 * 60_000;
/** The broker's shutdown hook moves nothing (single node) but still flushes and closes its logs. */
const stopTimeoutMs = 30_000;

/**
 * Small heap, serial GC and C1 only, for a fast start on a 2-core machine: measured here, the
 * broker is ready in about 5 s with C1 only against 7 to 10 s with C2. Tests need start time more
 * than peak throughput; a benchmark against this broker may want `-XX:TieredStopAtLevel=1` gone.
 */
const jvmFlags = [
  '-Xms256m',
  '-Xmx512m',
  '-XX:+UseSerialGC',
  '-XX:TieredStopAtLevel=1',
  '-Xshare:auto',
  '-XX:-UsePerfData',
  '-Djava.awt.headless=true',
];

const missingToolsHint =
  'Install Java 17+ and Maven (Debian: apt-get install openjdk-17-jre-headless maven), ' +
  'or set KAFKA_BROKERS=host:port to use a broker that is already running.';

export const kafkaLauncher: ServiceLauncher = {
  native: startNativeKafka,
  container: startKafkaContainer,
};

let resolving: Promise<string> | undefined;

/**
 * The dir holding the broker's jars (`java -cp '<dir>/*'`), resolving them with Maven on first use.
 * The cache is keyed by the Kafka version and stamped with a hash of the pom, so editing the pom
 * resolves again; a copy that did not finish is never used (it is renamed into place complete).
 */
export function ensureKafkaJars(): Promise<string> {
  resolving ??= resolveKafkaJars().finally(() => {
    resolving = undefined;
  });
  return resolving;
}

async function resolveKafkaJars(): Promise<string> {
  const pom = await readFile(pomFile, 'utf8');
  const version = kafkaVersionFromPom(pom);
  const stamp = createHash('sha256').update(pom).digest('hex');
  const versionDir = join(cacheRoot(), `kafka-${version}`);
  const libs = join(versionDir, 'libs');
  if (isComplete(libs, stamp)) return libs;

  const mvn = findOnPath('mvn');
  if (mvn === undefined) {
    throw new Error(
      `the Kafka ${version} jars are not in ${libs} yet and 'mvn' is not on PATH to resolve them ` +
        `from Maven Central. ${missingToolsHint}`,
    );
  }
  await mkdir(versionDir, { recursive: true });
  const partial = await mkdtemp(join(versionDir, 'libs.partial-'));
  try {
    const args = [
      '-q',
      '-B',
      '-f',
      pomFile,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${partial}`,
    ];
    const result = await run(mvn, args, { cwd: dirname(pomFile), timeoutMs: mvnTimeoutMs });
    if (result.error !== undefined) {
      throw new Error(
        `mvn could not resolve the Kafka ${version} jars (${result.error}):\n${lastLines(result.output, 40)}`,
      );
    }
    if (!existsSync(join(partial, `kafka_2.13-${version}.jar`))) {
      throw new Error(`mvn finished but copied no kafka_2.13-${version}.jar into ${partial}`);
    }
    await writeFile(join(partial, markerName), stamp);
    // mkdtemp made it owner-only; the jars are no secret and a service user may need to read them.
    await chmod(partial, 0o755);
    // Another process may have finished first; its copy is as good as ours.
    if (isComplete(libs, stamp)) return libs;
    await rm(libs, { recursive: true, force: true });
    try {
      await rename(partial, libs);
    } catch (err) {
      if (!isComplete(libs, stamp)) throw err;
    }
    return libs;
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
}

type PreparedBroker = { java: string; args: string[]; dir: string; url: string };

/** Writes the config of a single-node KRaft broker in a fresh dir and formats its storage. */
async function prepareNativeKafka(): Promise<PreparedBroker> {
  const java = findJava();
  if (java === undefined) {
    throw new Error(
      `Kafka runs natively on Java 17+, but no 'java' was found in $JAVA_HOME/bin or on PATH. ${missingToolsHint}`,
    );
  }
  const libs = await ensureKafkaJars();
  const classpath = join(libs, '*');
  const port = await getFreePort();
  let controllerPort = await getFreePort();
  while (controllerPort === port) controllerPort = await getFreePort();

  const dir = createServiceDir('kafka');
  const propertiesFile = join(dir, 'server.properties');
  const log4jFile = join(dir, 'log4j2.properties');
  const flags = [...jvmFlags, `-Dlog4j2.configurationFile=${log4jFile}`];
  try {
    writeFileSync(
      propertiesFile,
      kafkaServerProperties({ port, controllerPort, logDir: join(dir, 'data') }),
    );
    writeFileSync(log4jFile, log4jProperties);
    const format = await run(
      java,
      [
        ...flags,
        '-cp',
        classpath,
        'kafka.tools.StorageTool',
        'format',
        '-t',
        randomClusterId(),
        '-c',
        propertiesFile,
        '--standalone',
      ],
      { cwd: dir, timeoutMs: formatTimeoutMs },
    );
    if (format.error !== undefined) {
      throw new Error(
        `formatting the Kafka storage failed (${format.error}; Kafka 4.1 needs Java 17+):\n${lastLines(format.output, 30)}`,
      );
    }
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return {
    java,
    args: [...flags, '-cp', classpath, 'kafka.Kafka', propertiesFile],
    dir,
    url: `127.0.0.1:${port}`,
  };
}

/** Runs the prepared broker until it answers; `removeOnExit` also deletes its dir when it ends. */
async function launchBroker(
  prepared: PreparedBroker,
  removeOnExit: boolean,
): Promise<SupervisedProcess> {
  const broker = startSupervised({
    command: prepared.java,
    args: prepared.args,
    cwd: prepared.dir,
    env: stringEnv(process.env),
    logFile: join(prepared.dir, 'kafka.log'),
    ...(removeOnExit ? { removeOnExit: prepared.dir } : {}),
    stopSignal: 'SIGTERM',
    stopTimeoutMs,
  });
  if (!removeOnExit) markOwner(prepared.dir, broker.pid);
  try {
    await waitForBroker(prepared.url, broker.exited);
  } catch (err) {
    // Read the log before stopping: the watchdog may remove the dir with it.
    const tail = broker.tail(40);
    await broker.stop();
    throw new Error(`${describe(err)}\n--- last lines of the broker's log ---\n${tail}`);
  }
  return broker;
}

async function startNativeKafka(): Promise<RunningService> {
  const prepared = await prepareNativeKafka();
  const broker = await launchBroker(prepared, true);
  return { name: 'kafka', url: prepared.url, origin: 'native', stop: () => broker.stop() };
}

/** A private native broker that a test can stop and start again on the same port and data. */
export type RestartableKafka = RestartableProcess & {
  readonly url: string;
  /** Per partition of `topic`: its end offset and the offset `groupId` committed (0 if none). */
  groupOffsets(groupId: string, topic: string): Promise<PartitionOffsets[]>;
};

type PartitionOffsets = {
  partition: number;
  /** The high watermark: the offset the next record written to the partition gets. */
  end: number;
  /** The next offset the group will read; the group's lag is `end - committed`. */
  committed: number;
};

export async function startRestartableKafka(): Promise<RestartableKafka> {
  const prepared = await prepareNativeKafka();
  const broker = await startRestartableProcess(prepared.dir, () => launchBroker(prepared, false));
  return {
    url: prepared.url,
    ...broker,
    groupOffsets: (groupId, topic) => fetchGroupOffsets(prepared.url, groupId, topic),
  };
}

/** One short-lived admin client per call, so a broker restart leaves no stale connection. */
async function fetchGroupOffsets(
  brokers: string,
  groupId: string,
  topic: string,
): Promise<PartitionOffsets[]> {
  const admin = new Kafka({
    clientId: 'testkit-offsets',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    requestTimeout: 10_000,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    // One after the other: concurrent first requests race kafkajs's metadata load.
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    const committedByPartition = new Map(
      (committed?.partitions ?? []).map((p) => [p.partition, Math.max(0, Number(p.offset))]),
    );
    return ends
      .map((p) => ({
        partition: p.partition,
        end: Number(p.high),
        committed: committedByPartition.get(p.partition) ?? 0,
      }))
      .sort((a, b) => a.partition - b.partition);
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/**
 * A single-node KRaft broker in a container of apache/kafka (or MONITOR_TESTKIT_KAFKA_IMAGE, an
 * image configured the same way: every KAFKA_FOO_BAR variable is the setting foo.bar). A broker
 * hands clients its advertised address, which must be the host's: the client listener is
 * published on a free host port chosen first and advertised as 127.0.0.1:<that port>.
 */
async function startKafkaContainer(): Promise<RunningService> {
  const hostPort = await getFreePort();
  const container = await new GenericContainer(containerImage('kafka'))
    .withEnvironment({
      KAFKA_NODE_ID: '1',
      KAFKA_PROCESS_ROLES: 'broker,controller',
      KAFKA_LISTENERS: `PLAINTEXT://:${containerClientPort},CONTROLLER://:9093`,
      KAFKA_ADVERTISED_LISTENERS: `PLAINTEXT://127.0.0.1:${hostPort}`,
      KAFKA_CONTROLLER_LISTENER_NAMES: 'CONTROLLER',
      KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
      KAFKA_CONTROLLER_QUORUM_VOTERS: '1@localhost:9093',
      KAFKA_OFFSETS_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_OFFSETS_TOPIC_NUM_PARTITIONS: '3',
      KAFKA_TRANSACTION_STATE_LOG_REPLICATION_FACTOR: '1',
      KAFKA_TRANSACTION_STATE_LOG_MIN_ISR: '1',
      KAFKA_TRANSACTION_STATE_LOG_NUM_PARTITIONS: '3',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_REPLICATION_FACTOR: '1',
      KAFKA_SHARE_COORDINATOR_STATE_TOPIC_MIN_ISR: '1',
      KAFKA_GROUP_INITIAL_REBALANCE_DELAY_MS: '0',
      KAFKA_NUM_PARTITIONS: '1',
    })
    .withExposedPorts({ container: containerClientPort, host: hostPort })
    .withWaitStrategy(Wait.forListeningPorts())
    .withStartupTimeout(readyTimeoutMs)
    .start();
  const url = `127.0.0.1:${hostPort}`;
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= container.stop().then(() => undefined);
    return stopping;
  };
  try {
    await waitForBroker(url);
  } catch (err) {
    await stop();
    throw err;
  }
  return { name: 'kafka', url, origin: 'container', stop };
}

/**
 * Resolves once the broker creates a topic (with a leader), its group coordinator answers and it
 * hands out producer ids, so the first test neither races the controller nor waits for
 * `__consumer_offsets`. Rejects when `exited` resolves first or after 90 s.
 */
async function waitForBroker(brokers: string, exited?: Promise<number>): Promise<void> {
  const deadline = Date.now() + readyTimeoutMs;
  let exitCode: number | undefined;
  void exited?.then((code) => {
    exitCode = code;
  });
  let lastError: unknown;
  for (;;) {
    if (exitCode !== undefined) {
      throw new Error(`the Kafka broker exited (code ${exitCode}) before it was ready`);
    }
    try {
      await probeBroker(brokers);
      return;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `the Kafka broker at ${brokers} was not ready within ${readyTimeoutMs / 1000} s (last probe: ${describe(lastError)})`,
      );
    }
    await sleep(250);
  }
}

async function probeBroker(brokers: string): Promise<void> {
  const kafka = new Kafka({
    clientId: 'testkit',
    brokers: brokers.split(','),
    logLevel: logLevel.NOTHING,
    connectionTimeout: 2_000,
    requestTimeout: 10_000,
    retry: { retries: 0 },
  });
  const admin = kafka.admin();
  // kafkajs refuses an idempotent producer without retries; one quick retry keeps the probe short.
  const producer = kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 200 },
  });
  try {
    await admin.connect();
    await admin.createTopics({
      topics: [{ topic: readyTopic, numPartitions: 1, replicationFactor: 1 }],
      waitForLeaders: true,
      timeout: 10_000,
    });
    // createTopics answers false without waiting for a leader when an earlier probe created it.
    const { topics } = await admin.fetchTopicMetadata({ topics: [readyTopic] });
    const leaderless = topics.flatMap((t) => t.partitions).filter((p) => p.leader < 0);
    if (topics.length === 0 || leaderless.length > 0) {
      throw new Error(`${readyTopic} has no leader yet`);
    }
    // Finding a group coordinator creates __consumer_offsets; fails until its leaders are elected.
    await admin.describeGroups([readyGroup]);
    // An idempotent producer's connect asks for a producer id, which a fresh broker refuses
    // ("The coordinator is loading") until the controller granted it a block of ids.
    await producer.connect();
  } finally {
    await producer.disconnect().catch(() => undefined);
    await admin.disconnect().catch(() => undefined);
  }
}

/** server.properties of a single-node KRaft broker+controller; every listener on 127.0.0.1. */
export function kafkaServerProperties(options: {
  port: number;
  controllerPort: number;
  logDir: string;
}): string {
  const { port, controllerPort, logDir } = options;
  const settings: Record<string, string | number | boolean> = {
    'process.roles': 'broker,controller',
    'node.id': 1,
    // A dynamic quorum of one (`format --standalone`), as Kafka 4.x's own config/server.properties.
    'controller.quorum.bootstrap.servers': `127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'advertised.listeners': `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    'inter.broker.listener.name': 'PLAINTEXT',
    'controller.listener.names': 'CONTROLLER',
    'listener.security.protocol.map': 'CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT',
    'log.dirs': logDir,
    'num.partitions': 1,
    'default.replication.factor': 1,
    'min.insync.replicas': 1,
    'auto.create.topics.enable': true,
    // One node: every internal topic has one replica, else creating it waits for brokers forever.
    'offsets.topic.replication.factor': 1,
    // Created on the first group lookup; 3 partitions instead of 50 is the difference in seconds.
    'offsets.topic.num.partitions': 3,
    'transaction.state.log.replication.factor': 1,
    'transaction.state.log.min.isr': 1,
    'transaction.state.log.num.partitions': 3,
    'share.coordinator.state.topic.replication.factor': 1,
    'share.coordinator.state.topic.min.isr': 1,
    // Tests start one consumer at a time; the default 3 s delay would only slow every first join.
    'group.initial.rebalance.delay.ms': 0,
  };
  return Object.entries(settings)
    .map(([key, value]) => `${key}=${String(value)}`)
    .join('\n')
    .concat('\n');
}

/**
 * A Kafka cluster id: 16 random bytes, base64url without padding (what `StorageTool random-uuid`
 * prints), generated here to save a JVM start. Like Kafka's `Uuid.randomUuid`, never one starting
 * with '-', which the command line would read as an option.
 */
export function randomClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString('base64url');
    if (!id.startsWith('-')) return id;
  }
}

/** The `<kafka.version>` property of the testkit's pom. */
export function kafkaVersionFromPom(pom: string): string {
  const version = /<kafka\.version>\s*([^<\s]+)\s*<\/kafka\.version>/.exec(pom)?.[1];
  if (version === undefined) throw new Error(`no <kafka.version> property in ${pomFile}`);
  return version;
}

/** WARN and above (plus the one "started" line) to stdout, which the watchdog writes to kafka.log. */
const log4jProperties = `status = warn
appender.out.type = Console
appender.out.name = out
appender.out.target = SYSTEM_OUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = warn
rootLogger.appenderRef.out.ref = out
logger.started.name = kafka.server.KafkaRaftServer
logger.started.level = info
`;

function cacheRoot(): string {
  return process.env['MONITOR_TESTKIT_CACHE'] ?? join(homedir(), '.cache', 'monitor-testkit');
}

function isComplete(libs: string, stamp: string): boolean {
  try {
    return readFileSync(join(libs, markerName), 'utf8') === stamp;
  } catch {
    return false;
  }
}

function findJava(): string | undefined {
  const javaHome = process.env['JAVA_HOME'];
  if (javaHome !== undefined && javaHome !== '' && isExecutable(join(javaHome, 'bin', 'java'))) {
    return join(javaHome, 'bin', 'java');
  }
  return findOnPath('java');
}

function findOnPath(command: string): string | undefined {
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && isExecutable(join(dir, command))) return join(dir, command);
  }
  return undefined;
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Runs a command to completion; `error` says how it failed, `output` is stdout then stderr. */
function run(
  command: string,
  args: string[],
  options: { cwd: string; timeoutMs: number },
): Promise<{ error?: string; output: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      {
        cwd: options.cwd,
        timeout: options.timeoutMs,
        maxBuffer: 16 * 1024 * 1024,
        encoding: 'utf8',
      },
      (err, stdout, stderr) => {
        const output = `${stdout}${stderr}`;
        if (err === null) resolve({ output });
        else if (err.killed) resolve({ error: `killed after ${options.timeoutMs} ms`, output });
        else resolve({ error: err.message.split('\n')[0] ?? 'failed', output });
      },
    );
  });
}

function stringEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
}

function lastLines(text: string, count: number): string {
  return text.trimEnd().split('\n').slice(-count).join('\n');
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
