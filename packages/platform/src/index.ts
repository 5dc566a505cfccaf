export {
  AppError,
  conflict,
  dependencyUnavailable,
  errorCodes,
  forbidden,
  formatIssuePath,
  fromZodError,
  internalError,
  isAppError,
  isRetriableByDefault,
  maxListedIssues,
  methodNotAllowed,
  notFound,
  payloadTooLarge,
  rateLimited,
  unauthorized,
  unsupportedMediaType,
  validationError,
  zodIssues,
} from './app-error.js';
export type {
  AppErrorOptions,
  ErrorCode,
  FromZodErrorOptions,
  ValidationIssue,
} from './app-error.js';

export {
  ConfigError,
  baseConfigFields,
  baseConfigSchema,
  envBoolean,
  envList,
  envLogFormat,
  envLogLevel,
  envNonNegativeInt,
  envPort,
  envPositiveInt,
  envString,
  envUrl,
  hostPortSchema,
  parseConfig,
} from './config.js';
export type {
  BaseConfig,
  ConfigIssue,
  ConfigOf,
  DeepReadonly,
  Env,
  EnvListOptions,
  EnvUrlOptions,
} from './config.js';

export { createIdGenerator, idPrefixes, idSchema, isId, newId } from './ids.js';
export type { Id, IdGenerator, IdPrefix } from './ids.js';

export { createLogger, logFormats, logLevels, redactPaths, redactedValue } from './logger.js';
export type { CreateLoggerOptions, LogFormat, LogLevel, Logger } from './logger.js';

export {
  clientClosedRequestStatus,
  logRequest,
  loggedPath,
  noteRequestOrg,
  probePaths,
  requestLogLevel,
  requestLogger,
} from './request-log.js';

export {
  clientClosedStatus,
  createConsumerLagGauge,
  createMetrics,
  httpDurationBuckets,
  httpMetrics,
  metricsHandler,
  unmatchedRoute,
} from './metrics.js';
export type { CreateMetricsOptions, HttpLabel, Metrics } from './metrics.js';

export {
  describeErrorCode,
  internalErrorDetail,
  problemContentType,
  problemTypeBase,
  problemTypeUri,
  toAppError,
  toProblem,
} from './problem.js';
export type { Problem, ProblemBody } from './problem.js';

export {
  methodNotAllowedHandler,
  notFoundHandler,
  problemHandler,
  sendProblem,
} from './problem-handler.js';

export { closeHttpServer, createShutdown } from './shutdown.js';
export { createTargetAddressPolicy, isNetwork } from './target-address-policy.js';
export type { TargetAddressPolicy } from './target-address-policy.js';
export type {
  ClosableServer,
  CreateShutdownOptions,
  Shutdown,
  ShutdownHook,
  ShutdownResult,
} from './shutdown.js';

export { findPostgresServerBinaries, postgresServerUser } from './postgres-server.js';
export { createPollLoop } from './poll-loop.js';
export type { PollLoop } from './poll-loop.js';
