import { z } from 'zod';
import { logFormats, logLevels } from './logger.js';

/** The environment as `process.env` holds it. */
export type Env = Readonly<Record<string, string | undefined>>;

/** Deeply read-only: what `parseConfig` returns (the object and its arrays are frozen). */
type DeepReadonly<T> = T extends readonly (infer U)[]
  ? readonly DeepReadonly<U>[]
  : T extends object
    ? { readonly [K in keyof T]: DeepReadonly<T[K]> }
    : T;

/** The parsed configuration of a schema: `type GatewayConfig = ConfigOf<typeof gatewayConfigSchema>`. */
export type ConfigOf<S extends z.ZodType> = DeepReadonly<z.output<S>>;

export interface ConfigIssue {
  /** The environment variable, e.g. `PORT`. */
  readonly variable: string;
  /** Why it is wrong. Never contains the value. */
  readonly message: string;
}

/**
 * The configuration is unusable. The message lists every bad variable by name with the reason,
 * one per line, and never a value (DATABASE_URL and API keys are secrets).
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly issues: readonly ConfigIssue[];

  constructor(issues: readonly ConfigIssue[]) {
    const lines = issues.map((issue) => `  ${issue.variable}: ${issue.message}`);
    const count = new Set(issues.map((issue) => issue.variable)).size;
    super(
      `invalid configuration (${count} variable${count === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
    this.issues = issues;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

function toConfigIssue(issue: z.core.$ZodIssue, input: Env): ConfigIssue {
  const [variable, ...rest] = issue.path;
  if (variable === undefined) return { variable: '(configuration)', message: issue.message };
  const name = String(variable);
  if (rest.length === 0 && input[name] === undefined && issue.code === 'invalid_type') {
    return { variable: name, message: 'is required but not set' };
  }
  const entry = rest[0];
  const where = typeof entry === 'number' ? `entry ${entry + 1} ` : '';
  return { variable: name, message: `${where}${issue.message}` };
}

/**
 * Parses the environment with a zod schema (normally an object of `env*` fields) and returns a
 * deeply frozen result, or throws a `ConfigError` naming every bad variable. An empty variable
 * counts as unset, so `PORT=` falls back to the default. Variables the schema does not name are
 * ignored. Custom refinement messages must not interpolate the value.
 */
export function parseConfig<S extends z.ZodType<object>>(
  schema: S,
  env: Env = process.env,
): ConfigOf<S> {
  const input: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(env)) {
    input[name] = value === '' ? undefined : value;
  }
  const result = schema.safeParse(input);
  if (!result.success) {
    const seen = new Set<string>();
    const issues: ConfigIssue[] = [];
    for (const zodIssue of result.error.issues) {
      const issue = toConfigIssue(zodIssue, input);
      const key = `${issue.variable}\u0000${issue.message}`;
      if (!seen.has(key)) {
        seen.add(key);
        issues.push(issue);
      }
    }
    throw new ConfigError(issues);
  }
  return deepFreeze(result.data) as ConfigOf<S>;
}

/** A required string; chain `.optional()` or `.default()`. */
export function envString() {
  return z.string({ error: 'must be a string' });
}

/** A TCP port, 1..65535. */
export function envPort() {
  const message = 'must be an integer from 1 to 65535';
  return z.coerce
    .number({ error: message })
    .int({ error: message })
    .min(1, { error: message })
    .max(65535, { error: message });
}

/** A positive integer (≥ 1). */
export function envPositiveInt() {
  const message = 'must be a positive integer';
  return z.coerce.number({ error: message }).int({ error: message }).positive({ error: message });
}

/** A non-negative integer (≥ 0). */
export function envNonNegativeInt() {
  const message = 'must be a non-negative integer';
  return z.coerce
    .number({ error: message })
    .int({ error: message })
    .nonnegative({ error: message });
}

/** Exactly `true`, `false`, `1` or `0` (z.coerce.boolean would read "false" as true). */
export function envBoolean() {
  return z
    .enum(['true', 'false', '1', '0'], { error: 'must be true, false, 1 or 0' })
    .transform((value) => value === 'true' || value === '1');
}

export interface EnvListOptions {
  /** Validates each entry; any string when omitted. */
  readonly item?: z.ZodType<string, string>;
  /** Fewest entries; 1 when omitted. */
  readonly min?: number;
}

/** A comma-separated list; entries are trimmed and empty entries dropped (`a, b,` → `[a, b]`). */
export function envList(options: EnvListOptions = {}) {
  const min = options.min ?? 1;
  return z
    .string({ error: 'must be a comma-separated list' })
    .transform((value) =>
      value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== ''),
    )
    .pipe(
      z.array(options.item ?? z.string()).min(min, {
        error: `must list at least ${min} comma-separated entr${min === 1 ? 'y' : 'ies'}`,
      }),
    );
}

/** `host:port`, with IPv6 hosts in brackets, as Kafka bootstrap servers are written. */
export const hostPortSchema = z
  .string()
  .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):\d{1,5}$/, { error: 'must be host:port' });

export interface EnvUrlOptions {
  /** Accepted schemes without the colon, e.g. `['postgres', 'postgresql']`; any when omitted. */
  readonly protocols?: readonly string[];
}

/** An absolute URL, optionally restricted to some schemes. */
export function envUrl(options: EnvUrlOptions = {}) {
  const protocols = options.protocols?.map((protocol) => `${protocol}:`);
  const message =
    options.protocols === undefined
      ? 'must be an absolute URL'
      : `must be a URL with scheme ${options.protocols.map((p) => `${p}://`).join(' or ')}`;
  return z.string({ error: message }).refine(
    (value) => {
      try {
        const url = new URL(value);
        return protocols === undefined || protocols.includes(url.protocol);
      } catch {
        return false;
      }
    },
    { error: message },
  );
}

/**
 * A PostgreSQL URL, libpq style: `postgres://user:pass@h1:5432,h2:5432/db?target_session_attrs=
 * read-write` names every host of a replicated database (the roles connect to whichever is the
 * primary). WHATWG URLs take one host, so each host is checked on its own, the rest of the URL
 * with the first.
 */
export function envPostgresUrl() {
  const message =
    'must be a URL with scheme postgres:// or postgresql://, with one host or several (h1:5432,h2:5432)';
  return z.string({ error: message }).refine(
    (value) => {
      const match = /^(postgres(?:ql)?:\/\/(?:[^@/?#]*@)?)([^/?#]*)(.*)$/.exec(value);
      if (match === null) return false;
      const [, prefix = '', hostList = '', rest = ''] = match;
      // No host at all (a Unix socket given as `?host=/run/postgresql`) is one URL.
      const hosts = hostList === '' ? [''] : hostList.split(',');
      if (hosts.length > 1 && hosts.some((host) => host === '')) return false;
      try {
        for (const host of hosts) new URL(`${prefix}${host}${rest}`);
        return true;
      } catch {
        return false;
      }
    },
    { error: message },
  );
}

/** One of pino's levels (see `logLevels`). */
function envLogLevel() {
  return z.enum(logLevels, { error: `must be one of ${logLevels.join(', ')}` });
}

/** One of the log formats (see `logFormats`). */
function envLogFormat() {
  return z.enum(logFormats, { error: `must be one of ${logFormats.join(', ')}` });
}

/**
 * The shared variables (docs/api.md#configuration), with their defaults and their line in
 * docs/configuration.md (`.describe()`). Services that are optional in the embedded mode
 * (database, Kafka, Redis, bootstrap key) are optional here; a role that needs one overrides the
 * field: `baseConfigSchema.extend({ DATABASE_URL: envUrl(…) })`, or takes only what it uses:
 * `z.object({ PORT: baseConfigFields.PORT, … })`.
 */
export const baseConfigFields = {
  PORT: envPort().default(8080).describe('HTTP port of the role.'),
  DATABASE_URL: envPostgresUrl().optional().describe('PostgreSQL ≥ 15.'),
  KAFKA_BROKERS: envList({ item: hostPortSchema })
    .optional()
    .describe('Kafka bootstrap servers, comma-separated `host:port`.'),
  REDIS_URL: envUrl({ protocols: ['redis', 'rediss'] })
    .optional()
    .describe(
      'Redis, for an ingest rate limit that every gateway shares and a range query cache that every api shares; unset: each process counts and caches on its own.',
    ),
  MONITOR_BOOTSTRAP_API_KEY: envString()
    .optional()
    .describe(
      'When set, start-up ensures a default organization holding this key with every scope (demos, compose, tests).',
    ),
  INGEST_RATE_LIMIT_PER_MINUTE: envPositiveInt()
    .default(6000)
    .describe('Ingest requests per minute per API key, on every write endpoint.'),
  SERVICE_STALE_AFTER_SECONDS: envPositiveInt()
    .default(300)
    .describe('A service without samples for longer than this is `stale`.'),
  LOG_LEVEL: envLogLevel()
    .default('info')
    .describe(`The least level logged: ${logLevels.map((level) => `\`${level}\``).join(', ')}.`),
  LOG_FORMAT: envLogFormat()
    .optional()
    .describe(
      '`json` (one object per line, for machines) or `pretty` (readable lines, for a person); unset: `pretty` on a terminal, `json` anywhere else.',
    ),
};

export const baseConfigSchema = z.object(baseConfigFields);
