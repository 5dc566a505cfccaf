import type { Logger, Metrics, Shutdown } from '@monitor/platform';
import type { ServerConfig } from './config.js';

/** What every role is started with: the parsed config and the process-wide services. */
export type RoleContext = {
  config: ServerConfig;
  logger: Logger;
  metrics: Metrics;
  shutdown: Shutdown;
};
