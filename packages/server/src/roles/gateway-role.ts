import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Publisher, PublisherOptions } from '@monitor/bus';
import {
  agentWriteRoutes,
  createAgentWriteHandler,
  createGatewayListener,
  createGatewayMetrics,
  createIngestHandler,
  createIngestRateLimiter,
  createSeriesPolicy,
} from '@monitor/gateway';
import {
  encodeBinarySampleMessage,
  encodeSampleMessage,
  encodeSampleRecord,
  ingestPath,
} from '@monitor/schemas';
import type { Express } from 'express';
import type { Redis } from 'ioredis';
import { methodNotAllowedHandler } from '@monitor/platform';
import type { RequestListener } from 'node:http';
import type { ReadinessCheck } from '../ops-app.js';
import { createRoleApp } from '../ops-app.js';
import type { BusConfig, IngestConfig } from '../config.js';
import type { RoleContext } from '../role-context.js';

const maxIngestBodyBytes = 1024 * 1024;

/** How the gateway publishes: the broker's acknowledgement within the ingest deadline. */
export function ingestPublisherOptions(config: IngestConfig): PublisherOptions {
  return {
    publishTimeoutMs: config.INGEST_PUBLISH_TIMEOUT_MS,
    lingerMs: config.INGEST_PRODUCE_LINGER_MS,
    // The hosts of a request, and of requests sent together, that share a partition share a record.
    packRecords: encodeSampleRecord,
  };
}

/**
 * The gateway's request listener over the given publisher: POST /api/v1/ingest on the fast path, the
 * rest on an express app with the health and metrics routes (and `mount`, for role `all`).
 */
export function createGatewayRequestListener(
  ctx: RoleContext,
  config: IngestConfig & Pick<BusConfig, 'SAMPLES_TOPIC'>,
  deps: {
    /** The process's one key cache, shared with the API in role `all`. */
    authenticator: ApiKeyAuthenticator;
    /** Answers an ingest once it resolved: see `ingestPublisherOptions`. */
    publisher: Publisher;
    redis: Redis | undefined;
    readiness: ReadinessCheck[];
    mount?: (app: Express) => void;
  },
): RequestListener {
  const { logger } = ctx;
  const gatewayMetrics = createGatewayMetrics(ctx.metrics.registry);
  // One authenticator and one rate limit for /ingest and every agent protocol: a key's
  // requests count against the same budget whichever way its agents send.
  const writeDeps = {
    authenticator: deps.authenticator,
    rateLimiter: createIngestRateLimiter({
      limitPerMinute: config.INGEST_RATE_LIMIT_PER_MINUTE,
      ...(deps.redis ? { redis: deps.redis } : {}),
      logger,
      onStoreError: () => gatewayMetrics.rateLimitStoreError(),
    }),
    publisher: deps.publisher,
    seriesPolicy: createSeriesPolicy(
      {
        maxLabels: config.SERIES_MAX_LABELS,
        maxLabelNameLength: config.SERIES_MAX_LABEL_NAME_LENGTH,
        maxLabelValueLength: config.SERIES_MAX_LABEL_VALUE_LENGTH,
        maxNewSeriesPerMinute: config.SERIES_MAX_NEW_PER_MINUTE,
        maxTrackedSeries: config.SERIES_MAX_TRACKED,
      },
      Date.now,
    ),
    topic: config.SAMPLES_TOPIC,
    encodeMessage:
      config.INGEST_BUS_ENCODING === 'binary' ? encodeBinarySampleMessage : encodeSampleMessage,
    maxBodyBytes: maxIngestBodyBytes,
    rawRetentionMs: config.RAW_RETENTION_DAYS * 86_400_000,
    maxHistogramBuckets: config.INGEST_HISTOGRAM_MAX_BUCKETS,
    retryAfterSeconds: 2,
    nowMs: Date.now,
    metrics: gatewayMetrics,
  };
  const ingest = createIngestHandler({
    ...writeDeps,
    logger: logger.child({ component: 'ingest' }),
  });
  const agentWrites = new Map(
    [...agentWriteRoutes].map(([path, route]) => [
      path,
      {
        protocol: route.protocol,
        handle: createAgentWriteHandler(route, {
          ...writeDeps,
          logger: logger.child({ component: 'agent-write' }),
        }),
      },
    ]),
  );
  const app = createRoleApp({
    logger,
    metrics: ctx.metrics,
    readiness: deps.readiness,
    mount: (express) => {
      for (const path of [ingestPath, ...agentWriteRoutes.keys()]) {
        express.all(path, methodNotAllowedHandler(['POST']));
      }
      deps.mount?.(express);
    },
  });
  return createGatewayListener({ ingest, agentWrites, app, metrics: gatewayMetrics, logger });
}
