export {
  AppError,
  badRequest,
  dependencyUnavailable,
  forbidden,
  formatIssuePath,
  fromZodError,
  internalError,
  isRetriable,
  notFound,
  payloadTooLarge,
  rateLimited,
  unauthorized,
  unsupportedMediaType,
  validationError,
} from './app-error.js';
export {
  ConfigError,
  baseConfigFields,
  envList,
  envNonNegativeInt,
  envPositiveInt,
  envString,
  envPostgresUrl,
  envUrl,
  hostPortSchema,
  parseConfig,
} from './config.js';
export type { ConfigOf, Env } from './config.js';

export { idSchema, isId, newId } from './ids.js';
export type { IdPrefix } from './ids.js';

export { createLogger, logLevels } from './logger.js';
export type { LogLevel, Logger } from './logger.js';

export { logRequest, noteRequestOrg, requestLogger } from './request-log.js';

export { createConsumerLagReporter } from './consumer-lag.js';

export { createMetrics, httpMetrics, metricsHandler } from './metrics.js';
export type { Metrics } from './metrics.js';

export {
  methodNotAllowedHandler,
  notFoundHandler,
  problemHandler,
  sendProblem,
} from './problem-handler.js';

export { closeHttpServer, createShutdown } from './shutdown.js';
export { createTargetAddressPolicy, isNetwork } from './target-address-policy.js';
export type { TargetAddressPolicy } from './target-address-policy.js';
export type { Shutdown } from './shutdown.js';

export {
  findPostgresServerBinaries,
  findTimescaleExtension,
  postgresServerUser,
  timescalePreloadSettings,
} from './postgres-server.js';
export {
  embeddedPostgresDir,
  findRunningPostgres,
  isProcessAlive,
  postgresPasswordFile,
  readPostmasterPid,
  stopPostmaster,
} from './running-postgres.js';
export { createPollLoop } from './poll-loop.js';
