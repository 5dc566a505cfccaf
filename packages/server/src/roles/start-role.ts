import type { Bus, Publisher } from '@monitor/bus';
import { deadLetterTopic } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { migrate, readStorageInfo } from '@monitor/db';
import { Gauge } from 'prom-client';
import type { Redis } from 'ioredis';
import type {
  AllConfig,
  DatabaseConfig,
  IngestConfig,
  RoleConfig,
  SampleShardConfig,
} from '../config.js';
import {
  apiFields,
  evaluatorSliceFields,
  gatewaySliceFields,
  investigatorFields,
  migrationOptions,
  notifierFields,
  sliceOf,
  writerSliceFields,
} from '../config.js';
import { embeddedPostgresDir } from '@monitor/platform';
import { startEmbeddedPostgres } from '../embedded-postgres.js';
import { listenHttp } from '../http-listen.js';
import { createKeyAuthenticator } from '../key-authenticator.js';
import { warnOfMigration } from '../migration-warnings.js';
import { ensureBootstrapKey, openBus, openDatabase, openRedis } from '../dependencies.js';
import type { ReadinessCheck } from '../ops-app.js';
import { createRoleApp } from '../ops-app.js';
import { watchDatabase } from '../database-watch.js';
import type { RoleContext } from '../role-context.js';
import type { SampleShard } from '../sample-shards.js';
import { migrateSampleShards, openRoutedSampleShards, openSampleShards } from '../sample-shards.js';
import { createApiMount } from './api-role.js';
import { createGatewayRequestListener, ingestPublisherOptions } from './gateway-role.js';
import { applyAllHeapSettings } from './all-heap.js';
import { startConsumersThread } from './consumers-thread.js';
import { startAlertEvaluator } from './evaluator-role.js';
import { startInvestigator } from './investigator-role.js';
import { startNotifier } from './notifier-role.js';
import { startSampleWriter } from './writer-role.js';

/**
 * Starts a role with the configuration it parsed (`parseRoleConfig`, before any I/O) and returns
 * once it serves; everything it opened is registered for shutdown. Each component gets its slice.
 */
export async function startRole(start: RoleConfig, ctx: RoleContext): Promise<void> {
  switch (start.role) {
    case 'api':
    case 'notifier':
    case 'investigator':
      return startDatabaseRole(start, ctx);
    case 'gateway':
    case 'writer':
    case 'evaluator':
      return startBusRole(start, ctx);
    case 'all':
      return startAll(start.config, ctx);
  }
}

/** Roles of the database alone: no bus; Redis for the api's query cache when it is named. */
async function startDatabaseRole(
  start: Extract<RoleConfig, { role: 'api' | 'notifier' | 'investigator' }>,
  ctx: RoleContext,
): Promise<void> {
  const db = await openRoleDatabase(ctx, start.config, start.role);
  // Not a readiness check: without it the cache misses, and queries are answered all the same.
  const redis =
    start.role === 'api' && start.config.REDIS_URL !== undefined
      ? await openRedis(ctx, start.config.REDIS_URL)
      : undefined;
  if (start.role === 'notifier') startNotifier(ctx, sliceOf(notifierFields, start.config), db);
  if (start.role === 'investigator') {
    const shards = openSampleShards(ctx, start.config, {
      url: start.config.DATABASE_URL,
      primary: db,
      reads: db,
    });
    startInvestigator(ctx, sliceOf(investigatorFields, start.config), db, shards);
  }
  const app = createRoleApp({
    logger: ctx.logger,
    metrics: ctx.metrics,
    readiness: [databaseReadiness(db)],
    ...(start.role === 'api'
      ? {
          mount: createApiMount(
            sliceOf(apiFields, start.config),
            openReadDatabases(ctx, start.config, db),
            {
              authenticator: createKeyAuthenticator(start.config, db),
              logger: ctx.logger,
              registry: ctx.metrics.registry,
              redis,
            },
          ),
        }
      : {}),
  });
  await listenHttp(ctx, app, start.config.PORT);
}

/** The roles on Kafka (KAFKA_BROKERS is required by their schemas). */
async function startBusRole(
  start: Extract<RoleConfig, { role: 'gateway' | 'writer' | 'evaluator' }>,
  ctx: RoleContext,
): Promise<void> {
  const { config } = start;
  const db = await openRoleDatabase(ctx, config, start.role);
  const bus = await openBus(ctx, db, config);
  const samplesTopic = await bus.admin.ensureTopic(config.SAMPLES_TOPIC, {
    partitions: config.SAMPLES_TOPIC_PARTITIONS,
  });
  const readiness = readinessChecks(db, bus);

  if (start.role === 'gateway') {
    const redis = await openOptionalRedis(ctx, start.config.REDIS_URL, readiness);
    const listener = createGatewayRequestListener(ctx, sliceOf(gatewaySliceFields, start.config), {
      authenticator: createKeyAuthenticator(start.config, db),
      publisher: openIngestPublisher(ctx, bus, start.config),
      redis,
      readiness,
    });
    await listenHttp(ctx, listener, config.PORT);
    return;
  }
  await bus.admin.ensureTopic(deadLetterTopic(config.SAMPLES_TOPIC), { partitions: 1 });
  const shards = await openRoutedSampleShards(
    ctx,
    start.config,
    { url: config.DATABASE_URL, primary: db },
    config.SAMPLES_TOPIC,
  );
  if (start.role === 'writer') {
    await startSampleWriter(ctx, sliceOf(writerSliceFields, start.config), { db, bus, shards });
  } else {
    await startAlertEvaluator(ctx, sliceOf(evaluatorSliceFields, start.config), {
      db,
      bus,
      shards,
      samplesPartitions: samplesTopic.partitions,
    });
  }
  await listenHttp(
    ctx,
    createRoleApp({ logger: ctx.logger, metrics: ctx.metrics, readiness }),
    config.PORT,
  );
}

/**
 * Every role in one process; without DATABASE_URL an embedded PostgreSQL, without Kafka an
 * in-process bus. The main thread answers HTTP (gateway and API); the consumers run on a second
 * thread (`consumers-thread`), so both cores work.
 */
async function startAll(config: AllConfig, ctx: RoleContext): Promise<void> {
  applyAllHeapSettings(config);
  const databaseUrl = config.DATABASE_URL ?? (await startEmbeddedDatabase(ctx, config));
  const db = openDatabase(ctx, config, databaseUrl, 'monitor-all');
  watchDatabase(ctx, db);
  await waitForDatabase(db);
  const migrated = await migrate(db, migrationOptions(config));
  warnOfMigration(ctx.logger, migrated);
  await migrateSampleShards(config, databaseUrl, migrationOptions(config), (shard, result) =>
    warnOfMigration(ctx.logger.child({ shard }), result),
  );
  await reportStorage(ctx, db);
  await ensureBootstrapKey(ctx, config, db);

  const consumers = await startConsumersThread(ctx, config, databaseUrl);
  const readiness: ReadinessCheck[] = [
    databaseReadiness(db),
    { name: 'consumers', check: () => consumers.check() },
  ];
  const publisher = consumers.publisher ?? (await openKafkaPublisher(ctx, db, config, readiness));
  const redis = await openOptionalRedis(ctx, config.REDIS_URL, readiness);
  // One key cache for ingest, /api/v1, /prometheus and the ruler API: a revoked key stops
  // working on all of them at once, within API_KEY_CACHE_TTL_MS.
  const authenticator = createKeyAuthenticator(config, db);
  const listener = createGatewayRequestListener(ctx, sliceOf(gatewaySliceFields, config), {
    authenticator,
    publisher,
    redis,
    readiness,
    // Role `all` serves the query API on the same port.
    mount: createApiMount(
      sliceOf(apiFields, config),
      openReadDatabases(ctx, { ...config, DATABASE_URL: databaseUrl }, db),
      { authenticator, logger: ctx.logger, registry: ctx.metrics.registry, redis },
    ),
  });
  await listenHttp(ctx, listener, config.PORT);
}

/** Role `all` on Kafka: the gateway publishes with a client of its own (the consumers have theirs). */
async function openKafkaPublisher(
  ctx: RoleContext,
  db: Database,
  config: AllConfig,
  readiness: ReadinessCheck[],
): Promise<Publisher> {
  const bus = await openBus(ctx, db, config);
  readiness.push({ name: 'bus', check: () => bus.admin.ping() });
  return openIngestPublisher(ctx, bus, config);
}

/** The gateway's publisher, flushed on shutdown after the HTTP server stopped taking requests. */
function openIngestPublisher(ctx: RoleContext, bus: Bus, config: IngestConfig): Publisher {
  const publisher = bus.publisher(ingestPublisherOptions(config));
  ctx.shutdown.onShutdown('ingest publisher', () => publisher.close());
  return publisher;
}

/**
 * The api's databases: the control database's primary and read pools, and the sample shards
 * (without SAMPLE_SHARDS, one: the control database with its read pool).
 */
function openReadDatabases(
  ctx: RoleContext,
  config: Pick<DatabaseConfig, 'DATABASE_POOL_MAX' | 'DATABASE_URL'> &
    SampleShardConfig & { DATABASE_READ_URL?: string | undefined },
  primary: Database,
): { primary: Database; reads: Database; shards: readonly SampleShard[] } {
  const reads = openReadDatabase(ctx, config, primary);
  const shards = openSampleShards(ctx, config, { url: config.DATABASE_URL, primary, reads });
  return { primary, reads, shards };
}

/**
 * The pool of DATABASE_READ_URL (a standby: reads that may lag), or `primary` when it is unset.
 * Not a readiness check of its own: a lagging or missing standby fails those reads with a 503,
 * the rest of the API serves on.
 */
function openReadDatabase(
  ctx: RoleContext,
  config: Pick<DatabaseConfig, 'DATABASE_POOL_MAX'> & { DATABASE_READ_URL?: string | undefined },
  primary: Database,
): Database {
  if (config.DATABASE_READ_URL === undefined) return primary;
  return openDatabase(ctx, config, config.DATABASE_READ_URL, 'monitor-api-reads');
}

/** The database of a distributed role, and the bootstrap key in it. */
async function openRoleDatabase(
  ctx: RoleContext,
  config: DatabaseConfig,
  role: string,
): Promise<Database> {
  const db = openDatabase(ctx, config, config.DATABASE_URL, `monitor-${role}`);
  watchDatabase(ctx, db);
  await ensureBootstrapKey(ctx, config, db);
  await reportStorage(ctx, db).catch((err: unknown) => {
    // Not migrated yet (the migrate job runs beside the roles): storage is reported next start.
    ctx.logger.warn({ err }, 'storage not known yet: is the database migrated?');
  });
  return db;
}

/** Logs which storage runs and exports it as `monitor_storage_info{engine,version} 1`. */
async function reportStorage(ctx: RoleContext, db: Database): Promise<void> {
  const storage = await readStorageInfo(db);
  new Gauge({
    name: 'monitor_storage_info',
    help: 'The storage engine of the database (TimescaleDB or plain PostgreSQL) and its version.',
    labelNames: ['engine', 'version'],
    registers: [ctx.metrics.registry],
  }).set({ engine: storage.engine, version: storage.version }, 1);
  ctx.logger.info(
    { component: 'storage', ...storage },
    storage.engine === 'timescaledb'
      ? `storage: TimescaleDB ${storage.version}`
      : `storage: plain PostgreSQL ${storage.version}`,
  );
}

/** REDIS_URL set: the shared rate limit, and a readiness check for it. */
async function openOptionalRedis(
  ctx: RoleContext,
  url: string | undefined,
  readiness: ReadinessCheck[],
): Promise<Redis | undefined> {
  if (url === undefined) return undefined;
  const redis = await openRedis(ctx, url);
  readiness.push({ name: 'redis', check: async () => (await redis.ping()) === 'PONG' });
  return redis;
}

function databaseReadiness(db: Database): ReadinessCheck {
  return { name: 'database', check: () => db.ping().then(() => true) };
}

function readinessChecks(db: Database, bus: Bus): ReadinessCheck[] {
  return [databaseReadiness(db), { name: 'bus', check: () => bus.admin.ping() }];
}

/** Role `all` without DATABASE_URL: PostgreSQL from the machine's binaries, data under MONITOR_DATA_DIR. */
async function startEmbeddedDatabase(
  ctx: RoleContext,
  config: Pick<AllConfig, 'MONITOR_DATA_DIR' | 'EMBEDDED_TIMESCALEDB'>,
): Promise<string> {
  const dataDir = embeddedPostgresDir(config.MONITOR_DATA_DIR);
  const embedded = await startEmbeddedPostgres({
    dataDir,
    logger: ctx.logger.child({ component: 'embedded-postgres' }),
    timescaledb: config.EMBEDDED_TIMESCALEDB,
  });
  ctx.shutdown.onShutdown('embedded postgres', () => embedded.stop());
  return embedded.url;
}

/** A server just started (or recovering after a crash) may refuse connections for a moment. */
async function waitForDatabase(db: Database): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await db.ping();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
