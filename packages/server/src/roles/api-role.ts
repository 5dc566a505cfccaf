import type { Express } from 'express';
import { createApiRouter } from '@monitor/api';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Database } from '@monitor/db';
import {
  createAlertQueries,
  createInvestigationQueries,
  createNotificationChannelStore,
  createNotificationStore,
  createRuleStore,
  createServiceQueries,
  createShardedServiceQueries,
  createSilenceStore,
} from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { createTargetAddressPolicy } from '@monitor/platform';
import type { ApiConfig } from '../config.js';
import { createConsoleMount } from '../console-static.js';
import { createPrometheusMount } from './prometheus-mount.js';
import type { SampleShard } from '../sample-shards.js';
import { holdsEverything } from '../sample-shards.js';

/**
 * The REST API (everything under `/api/v1` but ingest), the Prometheus-compatible API
 * (`/prometheus`) and the web console as a `mount` for an express app: the app of role `api`,
 * or the gateway's app in role `all`, on the same port. `databases.reads` serves what may lag
 * behind the primary (samples and the services projection: the writer's, never the API's own
 * writes); everything else reads and writes `databases.primary`, so an answer always includes
 * the write its client just made. Keys are checked by `authenticator`, the process's one key
 * cache (on the primary), for every router of the mount.
 */
export function createApiMount(
  config: ApiConfig,
  databases: { primary: Database; reads: Database; shards: readonly SampleShard[] },
  deps: {
    authenticator: ApiKeyAuthenticator;
    logger: Logger;
    registry: Registry;
    redis: Redis | undefined;
  },
): (app: Express) => void {
  const db = databases.primary;
  const serviceOptions = { staleAfterSeconds: config.SERVICE_STALE_AFTER_SECONDS };
  // Services live with their samples: on the shards when there are others than this database.
  const sharded = !holdsEverything(databases.shards, db);
  const services = sharded
    ? createShardedServiceQueries(
        databases.reads,
        databases.shards.map((shard) => shard.reads),
        serviceOptions,
      )
    : createServiceQueries(databases.reads, serviceOptions);
  const router = createApiRouter({
    services,
    rules: createRuleStore(db),
    alerts: createAlertQueries(db),
    silences: createSilenceStore(db),
    investigations: createInvestigationQueries(
      db,
      sharded ? { shards: databases.shards.map((shard) => shard.db) } : {},
    ),
    channels: createNotificationChannelStore(db),
    notifications: createNotificationStore(db),
    authenticator: deps.authenticator,
    targetPolicy: createTargetAddressPolicy(config.NOTIFIER_ALLOWED_TARGET_NETWORKS),
  });
  const mountConsole = createConsoleMount();
  const mountPrometheus = createPrometheusMount(config, databases, deps);
  return (app) => {
    mountPrometheus(app);
    // The web console (`/` and its client routes, `/console/assets/`): no path under /api/v1.
    mountConsole(app);
    app.use(router);
  };
}
