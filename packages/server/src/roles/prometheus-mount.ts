import type { Express } from 'express';
import { createPrometheusRouter, createRulerRouter } from '@monitor/api';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { Database } from '@monitor/db';
import { createRuleGroupStateStore, createRuleGroupStore } from '@monitor/db';
import { createFloat64SlabPool, createPrometheusSeriesSource } from '@monitor/db/series';
import type { Logger } from '@monitor/platform';
import { createPromqlEngine } from '@monitor/promql';
import type { ApiConfig } from '../config.js';

/** Series one PromQL query may select, and the most `series` lists (not an environment setting). */
const maxSeriesPerQuery = 100_000;
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
 * for the api role's app (and `all`'s): samples from `databases.reads`, rule groups from the
 * primary, keys checked by the process's one key cache.
 */
export function createPrometheusMount(
  config: ApiConfig,
  databases: { primary: Database; reads: Database },
  deps: { authenticator: ApiKeyAuthenticator; logger: Logger },
): (app: Express) => void {
  const { authenticator, logger } = deps;
  const sampleSlabs = createFloat64SlabPool({ maxIdleSlabs: maxIdleSampleSlabs });
  const router = createPrometheusRouter({
    authenticator,
    logger: logger.child({ component: 'prometheus-api' }),
    sourceFor: (orgId) => createPrometheusSeriesSource(databases.reads, orgId),
    engineFor: (orgId, timeoutMs) => {
      const slabs = sampleSlabs.lease();
      const engine = createPromqlEngine({
        source: createPrometheusSeriesSource(databases.reads, orgId, { slabs }),
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
      timeoutMs: config.PROMQL_TIMEOUT_MS,
    },
    nowMs: Date.now,
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
