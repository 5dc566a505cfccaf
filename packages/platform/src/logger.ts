import pino from 'pino';

export type Logger = pino.Logger;

/** The pino levels LOG_LEVEL accepts; `silent` turns logging off. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof logLevels)[number];

/** What the censor writes in place of a redacted value. */
export const redactedValue = '[redacted]';

/**
 * Paths whose values never reach a log line: API keys in request headers (as pino-http and our
 * request logs name them) and any field named like a credential, at the top level or one level
 * down (`{ apiKey }`, `{ channel: { secret } }`). Deeper credentials must not be logged at all.
 */
export const redactPaths: readonly string[] = [
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'headers["x-api-key"]',
  'headers.authorization',
  'apiKey',
  'api_key',
  'password',
  'secret',
  'token',
  '*.apiKey',
  '*.api_key',
  '*.password',
  '*.secret',
  '*.token',
];

export interface CreateLoggerOptions {
  readonly level: LogLevel;
  /** Becomes the `name` field of every line, e.g. the role. */
  readonly name?: string;
  /** Where JSON lines go; stdout when omitted. */
  readonly destination?: pino.DestinationStream;
  /** More paths to redact, in pino's path syntax. */
  readonly redact?: readonly string[];
}

/**
 * The process logger: one JSON object per line, `level` as its label (`"info"`), `time` as ISO
 * 8601, errors under `err`, credentials redacted. Build one in `server` and hand children down.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const loggerOptions: pino.LoggerOptions = {
    level: options.level,
    redact: { paths: [...redactPaths, ...(options.redact ?? [])], censor: redactedValue },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
  };
  if (options.name !== undefined) loggerOptions.name = options.name;
  return options.destination === undefined
    ? pino(loggerOptions)
    : pino(loggerOptions, options.destination);
}
