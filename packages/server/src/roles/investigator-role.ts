import type { Database } from '@monitor/db';
import { createInvestigationStore } from '@monitor/db';
import {
  createChatCompletionsNarrator,
  createInvestigator,
  createInvestigatorMetrics,
} from '@monitor/investigator';
import type { InvestigatorConfig } from '../config.js';
import { writerGroupId } from '../consumer-groups.js';
import type { RoleContext } from '../role-context.js';
import type { SampleShard } from '../sample-shards.js';
import { holdsEverything } from '../sample-shards.js';

/**
 * Works the investigation queue: claims queued investigations (replicas share the queue through
 * `for update skip locked` and leases), analyses the stored evidence and writes the report. The
 * LLM narrator exists only when LLM_BASE_URL is set; without it nothing leaves the service.
 */
export function startInvestigator(
  ctx: RoleContext,
  config: InvestigatorConfig,
  db: Database,
  /** Where services, samples and snapshots are (the sample shards). */
  shards: readonly SampleShard[],
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
      store: createInvestigationStore(
        db,
        holdsEverything(shards, db) ? {} : { shards: shards.map((shard) => shard.db) },
      ),
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
