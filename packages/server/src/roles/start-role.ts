import type { Bus } from '@monitor/bus';
import { deadLetterTopic } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { migrate } from '@monitor/db';
import type { Redis } from 'ioredis';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../embedded-postgres.js';
import { listenHttp } from '../http-listen.js';
import { ensureBootstrapKey, openBus, openDatabase, openRedis } from '../dependencies.js';
import type { ReadinessCheck } from '../ops-app.js';
import { createRoleApp } from '../ops-app.js';
import type { RoleContext } from '../role-context.js';
import { createApiMount } from './api-role.js';
import { createGatewayRequestListener } from './gateway-role.js';
import { evaluatorGroupId, startAlertEvaluator } from './evaluator-role.js';
import { startInvestigator } from './investigator-role.js';
import { startNotifier } from './notifier-role.js';
import { startSampleWriter, writerGroupId } from './writer-role.js';

export const roles = [
  'gateway',
  'writer',
  'evaluator',
  'api',
  'notifier',
  'investigator',
  'all',
] as const;
export type Role = (typeof roles)[number];

/** Starts `role` and returns once it serves; everything it opened is registered for shutdown. */
export async function startRole(role: Role, ctx: RoleContext): Promise<void> {
  const { config } = ctx;
  const databaseUrl =
    config.DATABASE_URL ??
    (role === 'all' ? await startEmbeddedDatabase(ctx) : missing('DATABASE_URL', role));
  const db = openDatabase(ctx, databaseUrl, `monitor-${role}`);
  if (role === 'all') {
    await waitForDatabase(db);
    await migrate(db, migrationOptions(ctx));
  }
  await ensureBootstrapKey(ctx, db);

  if (role === 'api' || role === 'notifier' || role === 'investigator') {
    // Roles of the database alone: no bus, no Redis.
    if (role === 'notifier') startNotifier(ctx, db);
    if (role === 'investigator') startInvestigator(ctx, db);
    const app = createRoleApp({
      logger: ctx.logger,
      metrics: ctx.metrics,
      readiness: [databaseReadiness(db)],
      ...(role === 'api' ? { mount: createApiMount(ctx, db) } : {}),
    });
    await listenHttp(ctx, app, config.PORT);
    return;
  }

  const brokers =
    role === 'all'
      ? config.KAFKA_BROKERS
      : (config.KAFKA_BROKERS ?? missing('KAFKA_BROKERS', role));
  const bus = await openBus(ctx, db, brokers);
  await bus.admin.ensureTopic(config.SAMPLES_TOPIC, {
    partitions: config.SAMPLES_TOPIC_PARTITIONS,
  });
  const readiness = readinessChecks(db, bus);

  if (role !== 'gateway') {
    await bus.admin.ensureTopic(deadLetterTopic(config.SAMPLES_TOPIC), { partitions: 1 });
  }
  if (role === 'writer' || role === 'evaluator') {
    await (role === 'writer' ? startSampleWriter : startAlertEvaluator)(ctx, { db, bus });
    await listenHttp(
      ctx,
      createRoleApp({ logger: ctx.logger, metrics: ctx.metrics, readiness }),
      config.PORT,
    );
    return;
  }

  let redis: Redis | undefined;
  if (config.REDIS_URL !== undefined) {
    redis = await openRedis(ctx, config.REDIS_URL);
    const client = redis;
    readiness.push({ name: 'redis', check: async () => (await client.ping()) === 'PONG' });
  }
  if (role === 'all') {
    await startSampleWriter(ctx, { db, bus });
    await startAlertEvaluator(ctx, { db, bus });
    startNotifier(ctx, db);
    startInvestigator(ctx, db);
  }
  const listener = createGatewayRequestListener(ctx, {
    db,
    bus,
    redis,
    readiness,
    // Without Kafka nothing durable stands between the gateway and the consumers: a 200 then
    // means the writer has stored the samples and the evaluator has checkpointed their effect.
    ...(role === 'all' && brokers === undefined
      ? { ackAfterConsumedBy: [writerGroupId, evaluatorGroupId] }
      : {}),
    // Role `all` serves the query API on the same port.
    ...(role === 'all' ? { mount: createApiMount(ctx, db) } : {}),
  });
  await listenHttp(ctx, listener, config.PORT);
}

export function migrationOptions(ctx: RoleContext) {
  return {
    rawRetentionDays: ctx.config.RAW_RETENTION_DAYS,
    snapshotRetentionDays: ctx.config.SNAPSHOT_RETENTION_DAYS,
    compressAfterDays: ctx.config.COMPRESS_AFTER_DAYS,
  };
}

function databaseReadiness(db: Database): ReadinessCheck {
  return { name: 'database', check: () => db.ping().then(() => true) };
}

function readinessChecks(db: Database, bus: Bus): ReadinessCheck[] {
  return [databaseReadiness(db), { name: 'bus', check: () => bus.admin.ping() }];
}

/** Role `all` without DATABASE_URL: PostgreSQL from the machine's binaries, data under MONITOR_DATA_DIR. */
async function startEmbeddedDatabase(ctx: RoleContext): Promise<string> {
  const dataDir = join(ctx.config.MONITOR_DATA_DIR, 'postgres');
  const embedded = await startEmbeddedPostgres({
    dataDir,
    logger: ctx.logger.child({ component: 'embedded-postgres' }),
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

function missing(variable: string, role: string): never {
  throw new Error(`${variable} is required for role ${role}`);
}
