import pino from 'pino';
import pinoPretty from 'pino-pretty';

export type Logger = pino.Logger;

/** The pino levels LOG_LEVEL accepts; `silent` turns logging off. */
export const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

export type LogLevel = (typeof logLevels)[number];

/**
 * How lines are written: `json`, one object per line for machines (the default), or `pretty`,
 * colored and aligned for a person at a terminal (pino-pretty, in-process and synchronous).
 */
export const logFormats = ['json', 'pretty'] as const;

type LogFormat = (typeof logFormats)[number];

/** What the censor writes in place of a redacted value. */
export const redactedValue = '[redacted]';

/**
 * Paths whose values never reach a log line: API keys in request headers (as pino-http and our
 * request logs name them) and any field named like a credential, at the top level or one level
 * down (`{ apiKey }`, `{ channel: { secret } }`). Deeper credentials must not be logged at all.
 */
const redactPaths: readonly string[] = [
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
  /** `json` when omitted; the server picks `pretty` for a terminal (see `LOG_FORMAT`). */
  readonly format?: LogFormat;
  /** Where lines go; stdout when omitted. */
  readonly destination?: pino.DestinationStream;
  /** More paths to redact, in pino's path syntax. */
  readonly redact?: readonly string[];
}

/**
 * The process logger: one JSON object per line, `level` as its label (`"info"`), `time` as ISO
 * 8601, errors under `err`, credentials redacted. Build one in `server` and hand children down.
 * The `pretty` format renders the same fields for a person (redaction included) and keeps pino's
 * numeric levels and epoch times, which pino-pretty reads.
 */
export function createLogger(options: CreateLoggerOptions): Logger {
  const pretty = options.format === 'pretty';
  const loggerOptions: pino.LoggerOptions = {
    level: options.level,
    redact: { paths: [...redactPaths, ...(options.redact ?? [])], censor: redactedValue },
    ...(pretty
      ? {}
      : {
          timestamp: pino.stdTimeFunctions.isoTime,
          formatters: { level: (label: string) => ({ level: label }) },
        }),
  };
  if (options.name !== undefined) loggerOptions.name = options.name;
  if (pretty) {
    // prettyFactory renders one line in this thread: no worker, no stream plumbing, and lines
    // reach the destination in order (a person reads them as the process runs).
    const render = pinoPretty.prettyFactory({
      translateTime: 'SYS:HH:MM:ss.l',
      ignore: 'pid,hostname',
      // A request is one line to scan, as in the JSON format; errors keep their stack below it.
      singleLine: true,
      // On stdout colors when the terminal supports them; plain text anywhere else.
      ...(options.destination === undefined ? {} : { colorize: false }),
    });
    const target = options.destination ?? pino.destination({ dest: 1, sync: true });
    return pino(loggerOptions, { write: (line: string) => target.write(render(line)) });
  }
  return options.destination === undefined
    ? pino(loggerOptions)
    : pino(loggerOptions, options.destination);
}
