import type { Logger, Metrics, Shutdown } from '@monitor/platform';

/**
 * The process-wide services every role and component is started with. The configuration is not
 * here: each component receives the slice it reads (see `config.ts`).
 */
export type RoleContext = {
  logger: Logger;
  metrics: Metrics;
  shutdown: Shutdown;
};
