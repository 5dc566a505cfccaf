import type { Express } from 'express';
import type { RangeQueryCache } from '@monitor/api';
import {
  createInProcessStepsStore,
  createPrometheusRouter,
  combineLateWrites,
  createRangeQueryCache,
  createRedisStepsStore,
  createRulerRouter,
} from '@monitor/api';
import type { Redis } from 'ioredis';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Database } from '@monitor/db';
import {
  createExemplarReader,
  createShardedExemplarReader,
  createRuleGroupStateStore,
  createRuleGroupStore,
  readLateSampleWrites,
} from '@monitor/db';
import { createFloat64SlabPool, createSourceTiersReader } from '@monitor/db/series';
import type { Logger } from '@monitor/platform';
import { createPromqlEngine } from '@monitor/promql';
import type { Registry } from 'prom-client';
import { Counter, Gauge } from 'prom-client';
import type { ApiConfig } from '../config.js';
import type { SampleShard } from '../sample-shards.js';
import { createShardReadMetrics, shardedSeriesSource } from '../sample-shards.js';

/** Series one PromQL query may select, and the most `series` lists (not an environment setting). */
const maxSeriesPerQuery = 100_000;
/**
 * The most exemplars one `query_exemplars` answers with: as many as Prometheus holds in all by
 * default (`--storage.exemplars.max-exemplars`), so no answer of a stock Prometheus is refused.
 */
const maxExemplarsPerQuery = 100_000;
/** Prometheus' limit of points per series of a range query. */
const maxPointsPerSeries = 11_000;
/** The longest range query: a year, past every retention default. */
const maxRangeMs = 366 * 24 * 3600 * 1000;
/**
 * 1 MiB slabs of decoded samples kept for the next queries: a range query over 1,000 series of
 * 6 hours at 15 s decodes into about 23 (docs/benchmarks/promql.md, "PromQL").
 */
const maxIdleSampleSlabs = 64;

/**
 * The Prometheus-compatible API (`/prometheus`), with the ruler API of rule groups, as a mount
 * for the api role's app (and `all`'s): series, exemplars and late writes from every shard's
 * reads, merged, rule groups from the primary, keys checked by the process's one key cache.
 */
export function createPrometheusMount(
  config: ApiConfig,
  databases: { primary: Database; reads: Database; shards: readonly SampleShard[] },
  deps: {
    authenticator: ApiKeyAuthenticator;
    logger: Logger;
    registry: Registry;
    /** REDIS_URL set: the range query cache every replica shares. */
    redis: Redis | undefined;
  },
): (app: Express) => void {
  const { authenticator, logger } = deps;
  // Samples are on the shards (the one shard's reads are `databases.reads`).
  const sampleReads = databases.shards.map((shard) => shard.reads);
  const rangeQueryCache = openRangeQueryCache(config, sampleReads, deps);
  const sampleSlabs = createFloat64SlabPool({ maxIdleSlabs: maxIdleSampleSlabs });
  const shardReads = createShardReadMetrics(deps.registry, databases.shards);
  const router = createPrometheusRouter({
    authenticator,
    logger: logger.child({ component: 'prometheus-api' }),
    sourceFor: (orgId, partial) =>
      shardedSeriesSource(databases.shards, orgId, { metrics: shardReads, partial }),
    engineFor: (orgId, timeoutMs, partial) => {
      const slabs = sampleSlabs.lease();
      const engine = createPromqlEngine({
        source: shardedSeriesSource(databases.shards, orgId, {
          slabs,
          metrics: shardReads,
          partial,
        }),
        lookbackDeltaMs: config.PROMQL_LOOKBACK_DELTA_MS,
        maxSamples: config.PROMQL_MAX_SAMPLES,
        timeoutMs: Math.min(timeoutMs ?? config.PROMQL_TIMEOUT_MS, config.PROMQL_TIMEOUT_MS),
        maxSeries: maxSeriesPerQuery,
        maxPointsPerSeries,
      });
      return { engine, release: () => slabs.release() };
    },
    limits: {
      maxRangeMs,
      maxSeries: maxSeriesPerQuery,
      maxSamples: config.PROMQL_MAX_SAMPLES,
      maxExemplars: maxExemplarsPerQuery,
      timeoutMs: config.PROMQL_TIMEOUT_MS,
    },
    ...(rangeQueryCache === undefined ? {} : { rangeQueryCache }),
    nowMs: Date.now,
    sourceTiers: createSourceTiersReader(sampleReads, { refreshMs: 60_000, nowMs: Date.now }),
    exemplars: createShardedExemplarReader(sampleReads.map((reads) => createExemplarReader(reads))),
    // The evaluator saves these on the primary: read there, not on a standby that may lag.
    ruleGroups: createRuleGroupStateStore(databases.primary),
    defaultRuleIntervalMs: config.RULE_EVALUATION_INTERVAL_SECONDS * 1000,
  });
  const ruler = createRulerRouter({
    authenticator,
    logger: logger.child({ component: 'ruler-api' }),
    ruleGroups: createRuleGroupStore(databases.primary),
    maxRulesPerOrg: config.RULES_MAX_PER_ORG,
  });
  return (app) => {
    app.use(ruler);
    app.use(router);
  };
}

/**
 * The range query cache of PROMQL_CACHE_MAX_BYTES, in Redis when there is one (shared by the
 * replicas), in this process otherwise, checked against the late writes of the databases the
 * queries read (their snapshots are the ones the answers were computed in); undefined when the
 * setting is 0.
 */
function openRangeQueryCache(
  config: ApiConfig,
  reads: readonly Database[],
  deps: { registry: Registry; redis: Redis | undefined },
): RangeQueryCache | undefined {
  if (config.PROMQL_CACHE_MAX_BYTES === 0) return undefined;
  const store =
    deps.redis === undefined
      ? createInProcessStepsStore(config.PROMQL_CACHE_MAX_BYTES)
      : createRedisStepsStore(deps.redis, config.PROMQL_CACHE_MAX_BYTES);
  const requests = new Counter({
    name: 'monitor_promql_cache_requests_total',
    help: 'Range queries the cache could serve: answered partly from it (hit) or computed whole (miss).',
    labelNames: ['result'],
    registers: [deps.registry],
  });
  for (const result of ['hit', 'miss']) requests.inc({ result }, 0);
  new Gauge({
    name: 'monitor_promql_cache_bytes',
    help: 'About the memory the range query cache holds (in Redis: what every replica stored there).',
    registers: [deps.registry],
    async collect() {
      this.set(await Promise.resolve(store.bytes()).catch(() => Number.NaN));
    },
  });
  return createRangeQueryCache({
    store,
    lateWrites: combineLateWrites(
      reads.map((db) => ({
        read: (orgId, fromMs, toMs) => readLateSampleWrites(db, orgId, fromMs, toMs),
      })),
    ),
    settledMs: config.PROMQL_CACHE_SETTLED_MS,
    lookbackDeltaMs: config.PROMQL_LOOKBACK_DELTA_MS,
    maxSteps: maxPointsPerSeries,
    nowMs: Date.now,
    onLookup: (result) => requests.inc({ result }),
  });
}
