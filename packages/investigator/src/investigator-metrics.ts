import { Counter, Histogram } from 'prom-client';
import type { Registry } from 'prom-client';
import type { InvestigatorMetrics } from './investigator.js';

/** Runs by outcome, their duration and the narrator's outcomes, in `registry`. */
export function createInvestigatorMetrics(registry: Registry): InvestigatorMetrics {
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
