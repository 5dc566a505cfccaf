import { z } from 'zod';
import { ingestLimits } from '@monitor/schemas';
import type { ConfigOf, Env } from '@monitor/platform';
import type { MigrateOptions } from '@monitor/db';
import { defaultStoragePolicies } from '@monitor/db';
import {
  baseConfigFields,
  envList,
  envNonNegativeInt,
  envPositiveInt,
  envString,
  envPostgresUrl,
  envUrl,
  hostPortSchema,
  isNetwork,
  parseConfig,
} from '@monitor/platform';

export const roles = [
  'gateway',
  'writer',
  'evaluator',
  'api',
  'notifier',
  'investigator',
  'all',
] as const;
export type Role = (typeof roles)[number];

// Field groups: each role's schema is composed of the groups it uses, so a role parses (and
// requires) only what it reads. A variable in several groups is the same field object.

/** How the process logs; every command reads these. */
const logFields = {
  LOG_LEVEL: baseConfigFields.LOG_LEVEL,
  /** `json` or `pretty`; unset, the server writes `pretty` to a terminal and `json` elsewhere. */
  LOG_FORMAT: baseConfigFields.LOG_FORMAT,
};

/** Every long-running role. */
const baseFields = {
  ...logFields,
  /** HTTP port of the role. */
  PORT: baseConfigFields.PORT,
  SHUTDOWN_TIMEOUT_MS: envPositiveInt().default(25_000),
};

const databaseUrl = envPostgresUrl();

/** The database of a role; DATABASE_URL is required (see `embeddedDatabaseFields` for `all`). */
const databaseFields = {
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_MAX: envPositiveInt().default(10),
  /** When set, start-up ensures a default organization holding this key with every scope. */
  MONITOR_BOOTSTRAP_API_KEY: baseConfigFields.MONITOR_BOOTSTRAP_API_KEY,
};

/** Role `all` and the admin commands: without DATABASE_URL, the embedded PostgreSQL. */
const embeddedDatabaseFields = {
  DATABASE_URL: databaseUrl.optional(),
  /** Role `all` without DATABASE_URL keeps its embedded PostgreSQL here. */
  MONITOR_DATA_DIR: envString().default('./data'),
  /**
   * Role `all` without DATABASE_URL: `auto` preloads TimescaleDB into the embedded PostgreSQL
   * whenever the machine's PostgreSQL has it installed; `off` never does.
   */
  EMBEDDED_TIMESCALEDB: z.enum(['auto', 'off']).default('auto'),
};

const rawRetentionDays = envPositiveInt().default(30);

/**
 * The storage `migrate` creates and its policies (role `all` and the admin commands migrate).
 * Defaults: `defaultStoragePolicies` of @monitor/db.
 */
const migrationFields = {
  /** `auto`: TimescaleDB when the server has it preloaded, else plain PostgreSQL (a warning). */
  STORAGE_MODE: z.enum(['auto', 'timescale', 'postgres']).default('auto'),
  RAW_RETENTION_DAYS: rawRetentionDays,
  SNAPSHOT_RETENTION_DAYS: envPositiveInt().default(defaultStoragePolicies.snapshotRetentionDays),
  ROLLUP_1M_RETENTION_DAYS: envPositiveInt().default(defaultStoragePolicies.rollup1mRetentionDays),
  ROLLUP_1H_RETENTION_DAYS: envPositiveInt().default(defaultStoragePolicies.rollup1hRetentionDays),
  COMPRESS_AFTER_HOURS: envPositiveInt().optional(),
  /** Replaced by COMPRESS_AFTER_HOURS, still accepted (days × 24) when that is not set. */
  COMPRESS_AFTER_DAYS: envPositiveInt().optional(),
  /** How often TimescaleDB runs the storage jobs; unset: each job's own default. */
  STORAGE_JOB_INTERVAL_SECONDS: envPositiveInt().optional(),
};

const kafkaBrokers = envList({ item: hostPortSchema });

/** The samples topic on Kafka; KAFKA_BROKERS is required (role `all` overrides it). */
const busFields = {
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_CLIENT_ID: envString().default('monitor'),
  SAMPLES_TOPIC: envString().default('metrics.samples.v1'),
  /**
   * Used when the Kafka topic does not exist yet; more partitions allow more writer replicas.
   * The in-process bus of role `all` has one partition (see `startAll`).
   */
  SAMPLES_TOPIC_PARTITIONS: envPositiveInt().default(6),
};

/** The consumers of the samples topic (writer, evaluator). */
const consumerFields = {
  /**
   * How long Kafka waits for a silent consumer before giving its partitions to the rest of the
   * group: the pause a crashed (SIGKILLed) writer or evaluator replica causes, and what a
   * replica joining meanwhile waits for too (kafkajs rebalances the whole group). 6 s is the
   * least a broker accepts by default (`group.min.session.timeout.ms`). The cost: a replica
   * whose event loop or database stalls this long without a heartbeat loses its partitions
   * (a rebalance, then its batch is delivered again: nothing lost, nothing stored twice).
   */
  KAFKA_SESSION_TIMEOUT_MS: envPositiveInt().default(6_000),
  /**
   * How often a consumer tells the broker it is alive, and so how soon a survivor hears of a
   * rebalance (a replica that left or died). Must be below the session timeout, a third or less
   * to survive a lost heartbeat. Cost: one small request per consumer and interval.
   */
  KAFKA_HEARTBEAT_INTERVAL_MS: envPositiveInt().default(1_000),
};

/** A heartbeat at least as long as the session would lose every partition between two beats. */
function checkConsumerTimings(
  config: { KAFKA_SESSION_TIMEOUT_MS: number; KAFKA_HEARTBEAT_INTERVAL_MS: number },
  ctx: z.RefinementCtx,
): void {
  if (config.KAFKA_HEARTBEAT_INTERVAL_MS >= config.KAFKA_SESSION_TIMEOUT_MS) {
    ctx.addIssue({
      code: 'custom',
      path: ['KAFKA_HEARTBEAT_INTERVAL_MS'],
      message: 'must be below KAFKA_SESSION_TIMEOUT_MS (a third of it or less)',
    });
  }
}

/** How long a revoked API key may still work on a replica that cached it (gateway, api). */
const apiKeyCacheTtlMs = envPositiveInt().default(15_000);

/**
 * Networks (CIDRs such as `10.0.0.0/8`, `fd00::/8`, or single addresses) that Slack and
 * webhook targets may reach although they are internal: loopback, private, link-local (cloud
 * metadata), CGNAT… Empty by default, since tenants choose the targets and the notifier posts
 * from inside the operator's network; a self-hosted install with an internal receiver lists
 * its network here. The api checks it when a channel is saved, the notifier when it posts.
 */
const notifierAllowedTargetNetworks = envList({
  item: z.string().refine(isNetwork, {
    error: 'must be a CIDR network such as 10.0.0.0/8 or fd00::/8, or an IP address',
  }),
}).default([]);

/** The ingest path of the gateway: rate limit (Redis), publishing, key cache. */
const ingestFields = {
  REDIS_URL: baseConfigFields.REDIS_URL,
  /** Requests per minute per API key on POST /ingest. */
  INGEST_RATE_LIMIT_PER_MINUTE: baseConfigFields.INGEST_RATE_LIMIT_PER_MINUTE,
  /** An ingest request not acknowledged by Kafka within this time answers 503. */
  INGEST_PUBLISH_TIMEOUT_MS: envPositiveInt().default(5_000),
  /** How long the gateway gathers requests into one Kafka produce. */
  INGEST_PRODUCE_LINGER_MS: envPositiveInt().default(2),
  /**
   * How host samples go on the bus: `binary` (the writer and the evaluator decode it at a
   * fraction of JSON's cost), or `json`, which writers and evaluators older than the binary
   * encoding read: set it while upgrading from one, until every writer and evaluator runs this
   * version. Both read either.
   */
  INGEST_BUS_ENCODING: z.enum(['binary', 'json']).default('binary'),
  /** Samples older than this are refused at ingest. */
  RAW_RETENTION_DAYS: rawRetentionDays,
  API_KEY_CACHE_TTL_MS: apiKeyCacheTtlMs,
  /** Cardinality limits of every write (see `SeriesLimits`); the defaults are /ingest's bounds. */
  SERIES_MAX_LABELS: envPositiveInt().max(ingestLimits.maxTags).default(ingestLimits.maxTags),
  SERIES_MAX_LABEL_NAME_LENGTH: envPositiveInt()
    .max(ingestLimits.maxTagKeyLength)
    .default(ingestLimits.maxTagKeyLength),
  SERIES_MAX_LABEL_VALUE_LENGTH: envPositiveInt()
    .max(ingestLimits.maxTagValueLength)
    .default(ingestLimits.maxTagValueLength),
  /** New series (org, host, metric) per organization per minute and gateway; 0 = no limit. */
  SERIES_MAX_NEW_PER_MINUTE: envNonNegativeInt().default(0),
  /** Series a gateway remembers for that limit (≈ 150 bytes each). */
  SERIES_MAX_TRACKED: envPositiveInt().default(500_000),
};

const writerFields = {
  /**
   * The most host samples in one transaction. Each batch upserts every service it touches once,
   * so bigger batches of a backlog spread that over more samples.
   */
  WRITER_BATCH_MAX_MESSAGES: envPositiveInt().default(20_000),
  /**
   * The most a writer's fetch returns per partition (kafkajs caps a whole fetch at 10 MiB), in
   * bytes as stored: the gateway's large publishes are snappy-compressed about 4-5 times, so
   * kafkajs's 1 MiB default holds the 4-5 MiB of records that 4 MiB uncompressed held before.
   * Each fetch ends in a transaction, and fewer, bigger ones drain a backlog faster; 4 MiB of
   * compressed records took the writer's peak RSS from 659 to 805 MiB for no measurable gain.
   */
  WRITER_FETCH_MAX_BYTES_PER_PARTITION: envPositiveInt().default(1024 * 1024),
  /**
   * How long the writer waits for more partitions' records before it writes. kafkajs fetches
   * from a broker again only once the handlers of its last fetch resolved, so a longer wait
   * merges nothing more from that broker and only stalls catch-up (measured: 10 ms drained a
   * backlog 25-45 % faster than 100 ms). Short is enough to merge concurrent fetches.
   * Unset: 10 ms with Kafka; none on the in-process bus (its records go out at the end of the
   * event loop's turn), whose one log already hands over everything that arrived during the
   * last transaction and delivers nothing more while the writer waits: a wait is only latency
   * there (10 → 1 ms took `monitor all` from 1,897 to 2,649 single-payload requests/s).
   */
  WRITER_BATCH_MAX_WAIT_MS: envPositiveInt().optional(),
  /**
   * Kafka consumers per writer process, each writing its own partitions' batches in its own
   * transactions, so one fetches and decodes while another writes. More than the topic's
   * partitions leaves some idle.
   */
  WRITER_CONSUMERS: envPositiveInt().default(2),
  /**
   * Transactions (connections) each writer consumer writes a batch with at once, the batch's
   * partitions shared out between them: PostgreSQL's COPY of one connection uses one core.
   */
  WRITER_WRITE_CONNECTIONS: envPositiveInt().default(2),
  /** Storage maintenance (plain PostgreSQL) drops raw samples past this. */
  RAW_RETENTION_DAYS: rawRetentionDays,
  /** Resolved alerts (with their notifications) and finished investigations are kept this long. */
  ALERT_RETENTION_DAYS: envPositiveInt().default(90),
};

/** How far back an instant selector looks for a series' latest sample. */
const promqlLookbackDeltaMs = envPositiveInt().default(300_000);
/** The most samples one PromQL query may load (Prometheus' `--query.max-samples`). */
const promqlMaxSamples = envPositiveInt().default(50_000_000);
/** The URL people reach the console at: Alertmanager alerts link to it (`generatorURL`). */
const publicUrl = envUrl({ protocols: ['http', 'https'] }).optional();

/** A Prometheus rule group's evaluation interval, unless the group sets its own `interval`. */
const ruleEvaluationIntervalSeconds = envPositiveInt().default(60);

const evaluatorFields = {
  /** How often evaluators check whether alert rules changed (a change applies within ~this). */
  EVALUATOR_RULE_POLL_MS: envPositiveInt().default(1_000),
  RULE_EVALUATION_INTERVAL_SECONDS: ruleEvaluationIntervalSeconds,
  /** The time limit of one rule's query (and of each query its templates make). */
  RULE_QUERY_TIMEOUT_MS: envPositiveInt().default(10_000),
  PROMQL_LOOKBACK_DELTA_MS: promqlLookbackDeltaMs,
  PROMQL_MAX_SAMPLES: promqlMaxSamples,
  /** Rule templates' `externalURL`, as Prometheus' `--web.external-url`. */
  PUBLIC_URL: publicUrl,
};

export const notifierFields = {
  /** How often the notifier looks for due outbox rows. */
  NOTIFIER_POLL_MS: envPositiveInt().default(500),
  /** Delivery attempts per message before it is marked failed. */
  NOTIFIER_MAX_ATTEMPTS: envPositiveInt().default(10),
  /** The first retry waits this long; each next one twice as long, up to the maximum. */
  NOTIFIER_RETRY_BASE_MS: envPositiveInt().default(5_000),
  NOTIFIER_RETRY_MAX_MS: envPositiveInt().default(30 * 60_000),
  /** A Slack or webhook request without an answer after this long is a failed attempt. */
  NOTIFIER_HTTP_TIMEOUT_MS: envPositiveInt().default(10_000),
  NOTIFIER_ALLOWED_TARGET_NETWORKS: notifierAllowedTargetNetworks,
  /** SMTP server for email notifications, e.g. `smtp://user:pass@mail:587`. */
  SMTP_URL: envUrl({ protocols: ['smtp', 'smtps'] }).optional(),
  /**
   * How often active alerts are posted again to Alertmanagers (Prometheus' resend delay); they
   * stay firing there for 4 times this without a re-send.
   */
  NOTIFIER_ALERTMANAGER_RESEND_MS: envPositiveInt().default(60_000),
  PUBLIC_URL: publicUrl,
};

export const investigatorFields = {
  /** How often the investigator looks for queued investigations. */
  INVESTIGATOR_POLL_MS: envPositiveInt().default(500),
  /** A running investigation whose investigator died is taken over after this long. */
  INVESTIGATOR_LEASE_MS: envPositiveInt().default(120_000),
  INVESTIGATOR_MAX_ATTEMPTS: envPositiveInt().default(3),
  /**
   * The longest an investigation waits for the writer to store the samples its alert fired on
   * (the evaluator reads the stream independently and is often ahead).
   */
  INVESTIGATOR_EVIDENCE_WAIT_MS: envPositiveInt().default(30_000),
  /** An OpenAI-compatible endpoint (…/v1) that may rewrite the investigation narrative. */
  LLM_BASE_URL: envUrl({ protocols: ['http', 'https'] }).optional(),
  LLM_API_KEY: envString().optional(),
  LLM_MODEL: envString().default('gpt-4o-mini'),
  LLM_TIMEOUT_MS: envPositiveInt().default(10_000),
};

/** The query API (role `api`, and role `all` on the gateway's port). */
export const apiFields = {
  /** A service without samples for longer than this is `stale`. */
  SERVICE_STALE_AFTER_SECONDS: baseConfigFields.SERVICE_STALE_AFTER_SECONDS,
  API_KEY_CACHE_TTL_MS: apiKeyCacheTtlMs,
  NOTIFIER_ALLOWED_TARGET_NETWORKS: notifierAllowedTargetNetworks,
  PROMQL_MAX_SAMPLES: promqlMaxSamples,
  /** A PromQL query's time limit, also the most a request's `timeout` may ask for. */
  PROMQL_TIMEOUT_MS: envPositiveInt().default(30_000),
  PROMQL_LOOKBACK_DELTA_MS: promqlLookbackDeltaMs,
  /**
   * A standby (or several hosts) for the reads that may lag: PromQL, remote read, and the
   * services' listing, detail and history. Unset: DATABASE_URL.
   */
  DATABASE_READ_URL: envPostgresUrl().optional(),
  /** The Prometheus rules one organization may load, over all its rule groups. */
  RULES_MAX_PER_ORG: envPositiveInt().default(10_000),
  /** `/prometheus/api/v1/rules` reports it as the interval of a group that sets none. */
  RULE_EVALUATION_INTERVAL_SECONDS: ruleEvaluationIntervalSeconds,
};

const gatewayConfigSchema = z.object({
  ...baseFields,
  ...databaseFields,
  ...busFields,
  ...ingestFields,
});
const writerConfigSchema = z
  .object({
    ...baseFields,
    ...databaseFields,
    ...busFields,
    ...consumerFields,
    ...writerFields,
  })
  .superRefine(checkConsumerTimings);
const evaluatorConfigSchema = z
  .object({
    ...baseFields,
    ...databaseFields,
    ...busFields,
    ...consumerFields,
    ...evaluatorFields,
  })
  .superRefine(checkConsumerTimings);
const apiConfigSchema = z.object({ ...baseFields, ...databaseFields, ...apiFields });
const notifierConfigSchema = z.object({
  ...baseFields,
  ...databaseFields,
  ...notifierFields,
});
const investigatorConfigSchema = z.object({
  ...baseFields,
  ...databaseFields,
  ...investigatorFields,
});
/** Every role in one process: Kafka and a database of its own are optional. */
export const allConfigSchema = z
  .object({
    ...baseFields,
    ...databaseFields,
    ...embeddedDatabaseFields,
    ...migrationFields,
    ...busFields,
    KAFKA_BROKERS: kafkaBrokers.optional(),
    ...consumerFields,
    ...ingestFields,
    ...writerFields,
    ...evaluatorFields,
    ...notifierFields,
    ...investigatorFields,
    ...apiFields,
    /**
     * The consumers thread's young generation: each of its two semi-spaces, in MiB (the thread's
     * `--max-semi-space-size`; the main thread takes the process's flag).
     */
    CONSUMERS_SEMI_SPACE_MB: envPositiveInt().default(16),
    /**
     * How far, in percent, either thread's old generation grows past what survived its last full
     * collection before the next one (V8's `--heap-growing-percent`; V8's own choice is up to 300).
     * 60 against 100: peak RSS under the 100-host load 269 against 281 MiB (mean of three and
     * four alternating runs), the same requests/s within the noise.
     */
    HEAP_GROWING_PERCENT: envPositiveInt().default(60),
  })
  .superRefine(checkConsumerTimings);
/** `migrate`, `orgs`, `keys`: a database (or the embedded one) and how to migrate it. */
export const adminConfigSchema = z.object({
  ...logFields,
  ...embeddedDatabaseFields,
  ...migrationFields,
  // `monitor rules load` holds an organization to the ruler API's limit.
  RULES_MAX_PER_ORG: apiFields.RULES_MAX_PER_ORG,
});

type GatewayConfig = ConfigOf<typeof gatewayConfigSchema>;
type WriterRoleConfig = ConfigOf<typeof writerConfigSchema>;
type EvaluatorRoleConfig = ConfigOf<typeof evaluatorConfigSchema>;
type ApiRoleConfig = ConfigOf<typeof apiConfigSchema>;
type NotifierRoleConfig = ConfigOf<typeof notifierConfigSchema>;
type InvestigatorRoleConfig = ConfigOf<typeof investigatorConfigSchema>;
export type AllConfig = ConfigOf<typeof allConfigSchema>;
export type AdminConfig = ConfigOf<typeof adminConfigSchema>;

/** The parsed configuration of a field group: the slice a component receives. */
export type SliceOf<F extends z.ZodRawShape> = ConfigOf<z.ZodObject<F>>;
export type DatabaseConfig = SliceOf<typeof databaseFields>;
export type BusConfig = SliceOf<typeof busFields>;
export type ConsumerConfig = SliceOf<typeof consumerFields>;
export type IngestConfig = SliceOf<typeof ingestFields>;
export type WriterConfig = SliceOf<typeof writerFields>;
export type EvaluatorConfig = SliceOf<typeof evaluatorFields>;
export type NotifierConfig = SliceOf<typeof notifierFields>;
export type InvestigatorConfig = SliceOf<typeof investigatorFields>;
export type ApiConfig = SliceOf<typeof apiFields>;
export type MigrationConfig = SliceOf<typeof migrationFields>;

const samplesTopicFields = {
  SAMPLES_TOPIC: busFields.SAMPLES_TOPIC,
  SAMPLES_TOPIC_PARTITIONS: busFields.SAMPLES_TOPIC_PARTITIONS,
};

/** What the sample writer reads (KAFKA_BROKERS unset: the in-process bus of role `all`). */
export const writerSliceFields = {
  ...samplesTopicFields,
  KAFKA_BROKERS: kafkaBrokers.optional(),
  ...consumerFields,
  ...writerFields,
};
/** What the alert evaluator reads. */
export const evaluatorSliceFields = {
  ...samplesTopicFields,
  ...consumerFields,
  ...evaluatorFields,
};
/** What the gateway's request listener reads. */
export const gatewaySliceFields = { SAMPLES_TOPIC: busFields.SAMPLES_TOPIC, ...ingestFields };

/** The variables of `fields` out of a parsed configuration: a component's slice, frozen. */
export function sliceOf<F extends z.ZodRawShape>(fields: F, config: SliceOf<F>): SliceOf<F> {
  const source = config as Readonly<Record<string, unknown>>;
  const slice: Record<string, unknown> = {};
  for (const name of Object.keys(fields)) {
    if (source[name] !== undefined) slice[name] = source[name];
  }
  return Object.freeze(slice) as SliceOf<F>;
}

/** A role with the configuration it parsed: `switch (start.role)` narrows `config`. */
export type RoleConfig =
  | { role: 'gateway'; config: GatewayConfig }
  | { role: 'writer'; config: WriterRoleConfig }
  | { role: 'evaluator'; config: EvaluatorRoleConfig }
  | { role: 'api'; config: ApiRoleConfig }
  | { role: 'notifier'; config: NotifierRoleConfig }
  | { role: 'investigator'; config: InvestigatorRoleConfig }
  | { role: 'all'; config: AllConfig };

/**
 * Parses only what `role` reads. Throws a `ConfigError` naming every bad or missing variable,
 * e.g. KAFKA_BROKERS for a gateway, DATABASE_URL for any role but `all`.
 */
export function parseRoleConfig(role: Role, env: Env = process.env): RoleConfig {
  switch (role) {
    case 'gateway':
      return { role, config: parseConfig(gatewayConfigSchema, env) };
    case 'writer':
      return { role, config: parseConfig(writerConfigSchema, env) };
    case 'evaluator':
      return { role, config: parseConfig(evaluatorConfigSchema, env) };
    case 'api':
      return { role, config: parseConfig(apiConfigSchema, env) };
    case 'notifier':
      return { role, config: parseConfig(notifierConfigSchema, env) };
    case 'investigator':
      return { role, config: parseConfig(investigatorConfigSchema, env) };
    case 'all':
      return { role, config: parseConfig(allConfigSchema, env) };
  }
}

/** The options of `migrate` from the migration settings. */
export function migrationOptions(config: MigrationConfig): MigrateOptions {
  return {
    mode: config.STORAGE_MODE,
    rawRetentionDays: config.RAW_RETENTION_DAYS,
    snapshotRetentionDays: config.SNAPSHOT_RETENTION_DAYS,
    rollup1mRetentionDays: config.ROLLUP_1M_RETENTION_DAYS,
    rollup1hRetentionDays: config.ROLLUP_1H_RETENTION_DAYS,
    compressAfterHours:
      config.COMPRESS_AFTER_HOURS ??
      (config.COMPRESS_AFTER_DAYS === undefined ? undefined : config.COMPRESS_AFTER_DAYS * 24),
    jobIntervalSeconds: config.STORAGE_JOB_INTERVAL_SECONDS,
  };
}
