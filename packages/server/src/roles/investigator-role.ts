import type { Database } from '@monitor/db';
import { createInvestigationStore } from '@monitor/db';
import type { InvestigatorMetrics } from '@monitor/investigator';
import { createChatCompletionsNarrator, createInvestigator } from '@monitor/investigator';
import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { InvestigatorConfig } from '../config.js';
import type { RoleContext } from '../role-context.js';
import { writerGroupId } from './writer-role.js';

/**
 * Works the investigation queue: claims queued investigations (replicas share the queue through
 * `for update skip locked` and leases), analyses the stored evidence and writes the report. The
 * LLM narrator exists only when LLM_BASE_URL is set; without it nothing leaves the service.
 */
export function startInvestigator(
  ctx: RoleContext,
  config: InvestigatorConfig,
  db: Database,
): void {
  const logger = ctx.logger.child({ component: 'investigator' });
  const narrator =
    config.LLM_BASE_URL === undefined
      ? undefined
      : createChatCompletionsNarrator({
          baseUrl: config.LLM_BASE_URL,
          apiKey: config.LLM_API_KEY ?? '',
          model: config.LLM_MODEL,
          // Well inside the lease, so a slow answer never lets another replica take over.
          timeoutMs: Math.min(config.LLM_TIMEOUT_MS, Math.floor(config.INVESTIGATOR_LEASE_MS / 4)),
        });
  const investigator = createInvestigator(
    {
      store: createInvestigationStore(db),
      ...(narrator === undefined ? {} : { narrator }),
      clock: { now: () => new Date() },
      logger,
      metrics: createInvestigatorMetrics(ctx.metrics.registry),
    },
    {
      pollIntervalMs: config.INVESTIGATOR_POLL_MS,
      leaseMs: config.INVESTIGATOR_LEASE_MS,
      maxAttempts: config.INVESTIGATOR_MAX_ATTEMPTS,
      evidence: { storageGroupId: writerGroupId, maxWaitMs: config.INVESTIGATOR_EVIDENCE_WAIT_MS },
    },
  );
  investigator.start();
  ctx.shutdown.onShutdown('investigator', () => investigator.stop());
}

function createInvestigatorMetrics(registry: Registry): InvestigatorMetrics {
  const finished = new Counter({
    name: 'investigations_finished_total',
    help: 'Investigation runs by outcome: completed, retried, failed, lost (lease taken over).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'investigation_duration_seconds',
    help: 'Time from claim to the stored report.',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
    registers: [registry],
  });
  const narrated = new Counter({
    name: 'investigation_narratives_total',
    help: 'LLM narrative rewrites by outcome (rewritten, or failed and the computed text kept).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  return {
    investigationFinished(outcome, durationMs) {
      finished.inc({ outcome });
      duration.observe(durationMs / 1000);
    },
    narrated: (outcome) => narrated.inc({ outcome }),
  };
}
