import { Redis } from 'ioredis';
import type { Bus } from '@monitor/bus';
import { createInProcessBus, createKafkaBus } from '@monitor/bus';
import type { Database } from '@monitor/db';
import {
  createApiKeyStore,
  createDatabase,
  createDeadLetterStore,
  createOrgStore,
  loadLogResumeOffsets,
} from '@monitor/db';
import type { BusConfig, DatabaseConfig } from './config.js';
import type { RoleContext } from './role-context.js';

/** Opens the pool and closes it on shutdown (after everything that uses it). */
export function openDatabase(
  ctx: RoleContext,
  config: Pick<DatabaseConfig, 'DATABASE_POOL_MAX'>,
  url: string,
  applicationName: string,
): Database {
  const db = createDatabase({ url, maxConnections: config.DATABASE_POOL_MAX, applicationName });
  ctx.shutdown.onShutdown('database', () => db.close());
  return db;
}

/**
 * Kafka when KAFKA_BROKERS is set; otherwise the in-process bus (role `all` only), whose log
 * lives in memory: it resumes its offsets past those the consumers stored in the database (a
 * record of this process is never taken for a replay of an earlier one) and keeps its dead
 * letters in the database.
 */
export async function openBus(
  ctx: RoleContext,
  db: Database,
  config: Pick<BusConfig, 'KAFKA_CLIENT_ID'> & { KAFKA_BROKERS?: BusConfig['KAFKA_BROKERS'] },
): Promise<Bus> {
  const brokers = config.KAFKA_BROKERS;
  const bus =
    brokers === undefined
      ? createInProcessBus({
          resumeOffsets: await loadLogResumeOffsets(db.sql),
          deadLetters: createDeadLetterStore(db),
        })
      : createKafkaBus({
          brokers: [...brokers],
          clientId: config.KAFKA_CLIENT_ID,
          logger: ctx.logger.child({ component: 'kafka' }),
        });
  ctx.shutdown.onShutdown('bus', () => bus.close());
  return bus;
}

/**
 * A Redis client that fails fast instead of queueing commands while disconnected, so the rate
 * limiter can fail open at once; it keeps reconnecting in the background. Resolves once it is
 * connected, or after `readyTimeoutMs` without (the role then starts failing open): otherwise
 * the first requests would pass uncounted while the connection is still being made.
 */
export async function openRedis(
  ctx: RoleContext,
  url: string,
  readyTimeoutMs = 5_000,
): Promise<Redis> {
  const log = ctx.logger.child({ component: 'redis' });
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // Every ingest request runs one rate-limit script: pipelined, the commands issued while one
    // event-loop turn handles many requests go out in one socket write instead of one each
    // (profiled: the per-command write was the gateway's largest single cost).
    enableAutoPipelining: true,
  });
  let lastErrorLogMs = 0;
  redis.on('error', (err) => {
    if (Date.now() - lastErrorLogMs > 10_000) {
      lastErrorLogMs = Date.now();
      log.warn({ err }, 'redis connection error');
    }
  });
  ctx.shutdown.onShutdown('redis', async () => {
    await redis.quit().catch(() => redis.disconnect());
  });
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), readyTimeoutMs);
    redis.once('ready', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (!ready)
    log.warn(
      { readyTimeoutMs },
      'redis not reachable at start; rate limiting fails open until it is',
    );
  return redis;
}

/** MONITOR_BOOTSTRAP_API_KEY: a default organization holding that key with every scope. */
export async function ensureBootstrapKey(
  ctx: RoleContext,
  config: Pick<DatabaseConfig, 'MONITOR_BOOTSTRAP_API_KEY'>,
  db: Database,
): Promise<void> {
  const key = config.MONITOR_BOOTSTRAP_API_KEY;
  if (key === undefined) return;
  const org = await createOrgStore(db).ensureDefaultOrganization();
  await createApiKeyStore(db).ensureKey(key, {
    orgId: org.id,
    name: 'bootstrap',
    scopes: ['ingest', 'read', 'write'],
  });
  ctx.logger.info({ orgId: org.id }, 'bootstrap API key ensured');
}
