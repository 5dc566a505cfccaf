import type { BenchProcess } from '../bench-process.js';
import type { MonitorStack } from '../monitor-stack.js';
import { startPipelineStack } from '../monitor-stack.js';
import { logProgress } from './progress.js';
import type { BenchContext } from './run-bench.js';

/** The alerting pipeline as both alert benchmarks measure it, each role its own process. */
export type AlertingPipeline = {
  stack: MonitorStack;
  /** What every request of the run carries: its API key and JSON's content type. */
  headers: Record<string, string>;
  gateway: BenchProcess;
  evaluator: BenchProcess;
  api: BenchProcess;
};

/**
 * PostgreSQL, Kafka and Redis from testkit (or the environment), a fresh migrated database, then
 * `monitor gateway`, `writer`, `evaluator` and `api` (and `investigator` when asked) as separate
 * processes; the servers' origins go into the report's settings.
 */
export async function startAlertingPipeline(
  {
    report,
    cleanup,
    processes,
  }: BenchContext<unknown, { settings: { origins: Record<string, string> } }>,
  options: { databasePrefix: string; investigator: boolean },
): Promise<AlertingPipeline> {
  const { stack, headers } = await startPipelineStack({
    cleanup,
    logDir: report.logDir,
    databasePrefix: options.databasePrefix,
  });
  report.settings.origins = stack.serviceOrigins;
  const roles = options.investigator
    ? (['gateway', 'writer', 'evaluator', 'api', 'investigator'] as const)
    : (['gateway', 'writer', 'evaluator', 'api'] as const);
  logProgress(`starting ${roles.slice(0, -1).join(', ')} and ${roles.at(-1)}`);
  const [gateway, , evaluator, api] = await stack.startRoles(roles, processes);
  return { stack, headers, gateway, evaluator, api };
}
