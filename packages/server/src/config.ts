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
// requires) only what it reads. A variable in several groups is the same field object. Each
// field's `.describe()` is its line in docs/configuration.md (`monitor config-reference`);
// comments keep the reasons behind a default.

/** How the process logs; every command reads these. */
const logFields = {
  LOG_LEVEL: baseConfigFields.LOG_LEVEL,
  LOG_FORMAT: baseConfigFields.LOG_FORMAT,
};

/** Every long-running role. */
const baseFields = {
  ...logFields,
  PORT: baseConfigFields.PORT,
  SHUTDOWN_TIMEOUT_MS: envPositiveInt()
    .default(25_000)
    .describe(
      'How long a SIGTERMed role may take to finish its work in flight, flush and commit before it exits anyway (exit code 1).',
    ),
};

const databaseUrl = envPostgresUrl().describe(
  'PostgreSQL ≥ 15, with or without TimescaleDB. A replicated database as several hosts, libpq style (`postgres://u:p@db-1:5432,db-2:5432/monitor?target_session_attrs=read-write`): every role connects to whichever is the primary, again after a promotion. Required by every role but `all`; unset in `all` and the commands, the embedded PostgreSQL under `MONITOR_DATA_DIR`.',
);

/** The database of a role; DATABASE_URL is required (see `embeddedDatabaseFields` for `all`). */
const databaseFields = {
  DATABASE_URL: databaseUrl,
  DATABASE_POOL_MAX: envPositiveInt()
    .default(10)
    .describe('Connections a role opens to its database at most.'),
  MONITOR_BOOTSTRAP_API_KEY: baseConfigFields.MONITOR_BOOTSTRAP_API_KEY,
};

/** The name of a sample shard: its label in `/metrics` and in `monitor shards`. */
const shardName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, {
  error: 'must be 1–63 lowercase letters, digits, `_` or `-`, starting with a letter or digit',
});

/**
 * SAMPLE_SHARDS: a JSON list of shards. Parsed here, before any connection, so a typo in one
 * URL stops the role at start rather than at its first write to that shard.
 */
const sampleShards = envString()
  .transform((value, ctx) => {
    try {
      return JSON.parse(value) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON list of shards' });
      return z.NEVER;
    }
  })
  .pipe(
    z
      .array(
        z.strictObject({
          name: shardName,
          url: envPostgresUrl(),
          read_url: envPostgresUrl().optional(),
        }),
        { error: 'must be a JSON list of `{ "name", "url", "read_url"? }`' },
      )
      .min(1, { error: 'must name at least one shard' })
      .refine((shards) => new Set(shards.map((shard) => shard.name)).size === shards.length, {
        error: 'names each shard once',
      }),
  )
  .optional()
  .describe(
    'The sample shards (docs/operations.md, "Sample shards"), a JSON list of `{ "name", "url", "read_url"? }` (each a TimescaleDB cluster, several hosts as for `DATABASE_URL`): a partition of the samples topic keeps its samples, series, services and rollups on the shard the control database (`DATABASE_URL`) names for it, on the first shard when it names none. Unset: one shard, `DATABASE_URL` (reads: `DATABASE_READ_URL`).',
  );

/** The roles that store or read samples, and the commands (`monitor shards`, `migrate`). */
const sampleShardFields = { SAMPLE_SHARDS: sampleShards };

/** Role `all` and the admin commands: without DATABASE_URL, the embedded PostgreSQL. */
const embeddedDatabaseFields = {
  DATABASE_URL: databaseUrl.optional(),
  MONITOR_DATA_DIR: envString()
    .default('./data')
    .describe(
      'Where role `all` and the commands keep the embedded PostgreSQL when `DATABASE_URL` is unset (as root, user `postgres` must be able to enter it).',
    ),
  EMBEDDED_TIMESCALEDB: z
    .enum(['auto', 'off'])
    .default('auto')
    .describe(
      '`auto`: the embedded PostgreSQL preloads TimescaleDB whenever the machine has it installed; `off`: never.',
    ),
};

const rawRetentionDays = envPositiveInt()
  .default(30)
  .describe(
    'Days raw samples and staleness markers are kept: the gateway refuses older samples, and retention (TimescaleDB jobs, or the writer on plain PostgreSQL) drops them.',
  );

/**
 * The storage `migrate` creates and its policies (role `all` and the admin commands migrate).
 * Defaults: `defaultStoragePolicies` of @monitor/db.
 */
const migrationFields = {
  STORAGE_MODE: z
    .enum(['auto', 'timescale', 'postgres'])
    .default('auto')
    .describe(
      "Storage at a database's first migration: `auto` (TimescaleDB when the server has it preloaded, else plain PostgreSQL with a warning), `timescale` (TimescaleDB or exit 1), `postgres`.",
    ),
  RAW_RETENTION_DAYS: rawRetentionDays,
  SNAPSHOT_RETENTION_DAYS: envPositiveInt()
    .default(defaultStoragePolicies.snapshotRetentionDays)
    .describe('Days container and process snapshots are kept.'),
  EXEMPLAR_RETENTION_DAYS: envPositiveInt()
    .default(defaultStoragePolicies.exemplarRetentionDays)
    .describe('Days the exemplars of remote-write and OTLP are kept, for `query_exemplars`.'),
  ROLLUP_1M_RETENTION_DAYS: envPositiveInt()
    .default(defaultStoragePolicies.rollup1mRetentionDays)
    .describe(
      'Days the 5-minute tier PromQL and the metrics history read past the raw samples is kept, and what samples_1m held before migration 36 retired it (at least 2).',
    ),
  ROLLUP_1H_RETENTION_DAYS: envPositiveInt()
    .default(defaultStoragePolicies.rollup1hRetentionDays)
    .describe(
      'Days the 1-hour tier PromQL and the metrics history read past the raw samples is kept, and what samples_1h held before migration 37 retired it (at least 2).',
    ),
  COMPRESS_AFTER_HOURS: envNonNegativeInt()
    .optional()
    .describe(
      'TimescaleDB compresses a sample chunk this many hours after it ended, at least a minute (0: a minute after, at the next run of its job, which looks every minute); unset: `COMPRESS_AFTER_DAYS` × 24, else 0.',
    ),
  COMPRESS_AFTER_DAYS: envPositiveInt()
    .optional()
    .describe('Replaced by `COMPRESS_AFTER_HOURS`, still accepted (× 24) when that is unset.'),
  STORAGE_JOB_INTERVAL_SECONDS: envPositiveInt()
    .optional()
    .describe(
      "How often TimescaleDB runs every storage job; unset: each job's own schedule (1 minute to 1 hour).",
    ),
};

const kafkaBrokers = envList({ item: hostPortSchema }).describe(
  'Kafka bootstrap servers, comma-separated `host:port`. Required by the gateway, writer and evaluator; unset in `all`, an in-process bus.',
);

/** The samples topic on Kafka; KAFKA_BROKERS is required (role `all` overrides it). */
const busFields = {
  KAFKA_BROKERS: kafkaBrokers,
  KAFKA_CLIENT_ID: envString()
    .default('monitor')
    .describe("The Kafka client id of the role's producers and consumers."),
  SAMPLES_TOPIC: envString()
    .default('metrics.samples.v1')
    .describe(
      'The Kafka topic the gateway publishes samples to and the writer and evaluator read.',
    ),
  /** The in-process bus of role `all` has one partition (see `startAll`). */
  SAMPLES_TOPIC_PARTITIONS: envPositiveInt()
    .default(6)
    .describe(
      'Partitions of the samples topic when it is created (never changed after): the most consumers a group can use.',
    ),
};

/** The consumers of the samples topic (writer, evaluator). */
const consumerFields = {
  /**
   * 6 s is the least a broker accepts by default (`group.min.session.timeout.ms`). The cost: a
   * replica whose event loop stalls this long without a heartbeat loses its partitions (a
   * rebalance, then its batch is delivered again: nothing lost, nothing stored twice); a batch
   * waiting on the database does not, the bus heartbeats for it. kafkajs rebalances the whole group, so a replica joining meanwhile waits too.
   */
  KAFKA_SESSION_TIMEOUT_MS: envPositiveInt()
    .default(6_000)
    .describe(
      'How long Kafka waits for a silent writer or evaluator before giving its partitions to the rest of the group: the pause a crashed replica causes. Raise it (10–15 s) if replicas lose their partitions on a busy machine (an event loop that stalls sends no heartbeat).',
    ),
  /** Cost: one small request per consumer and interval. */
  KAFKA_HEARTBEAT_INTERVAL_MS: envPositiveInt()
    .default(1_000)
    .describe(
      'How often a consumer tells Kafka it is alive, and so how soon a survivor hears of a rebalance; below `KAFKA_SESSION_TIMEOUT_MS`, a third of it or less.',
    ),
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

const apiKeyCacheTtlMs = envPositiveInt()
  .default(15_000)
  .describe(
    'How long a revoked API key may still work on a replica that cached it (longer while the database is away: a cached key keeps working until it answers again).',
  );

/**
 * Empty by default, since tenants choose the targets and the notifier posts from inside the
 * operator's network; a self-hosted install with an internal receiver lists its network here.
 * The api checks it when a channel is saved, the notifier when it posts.
 */
const notifierAllowedTargetNetworks = envList({
  item: z.string().refine(isNetwork, {
    error: 'must be a CIDR network such as 10.0.0.0/8 or fd00::/8, or an IP address',
  }),
})
  .default([])
  .describe(
    'Internal networks (CIDRs such as `10.0.0.0/8`, `fd00::/8`, or addresses) that Slack, webhook and Alertmanager targets may reach; loopback, private, link-local and other internal addresses are refused otherwise.',
  );

/** The ingest path of the gateway: rate limit (Redis), publishing, key cache. */
const ingestFields = {
  REDIS_URL: baseConfigFields.REDIS_URL,
  INGEST_RATE_LIMIT_PER_MINUTE: baseConfigFields.INGEST_RATE_LIMIT_PER_MINUTE,
  INGEST_PUBLISH_TIMEOUT_MS: envPositiveInt()
    .default(5_000)
    .describe(
      'An ingest request whose samples Kafka has not acknowledged within this answers 503.',
    ),
  INGEST_PRODUCE_LINGER_MS: envPositiveInt()
    .default(2)
    .describe('How long the gateway gathers requests into one Kafka produce.'),
  INGEST_BUS_ENCODING: z
    .enum(['binary', 'json'])
    .default('binary')
    .describe(
      'How host samples go on the bus: `binary`, or `json` while writers or evaluators older than the binary encoding still run (both read either).',
    ),
  RAW_RETENTION_DAYS: rawRetentionDays,
  INGEST_HISTOGRAM_MAX_BUCKETS: envPositiveInt()
    .default(160)
    .describe(
      'The most buckets (positive and negative) one native histogram may have; a larger one is refused and counted, the rest of its request kept.',
    ),
  API_KEY_CACHE_TTL_MS: apiKeyCacheTtlMs,
  /** The defaults are /ingest's own bounds (see `SeriesLimits`). */
  SERIES_MAX_LABELS: envPositiveInt()
    .max(ingestLimits.maxTags)
    .default(ingestLimits.maxTags)
    .describe('Tags (labels) one sample may carry, on every write path.'),
  SERIES_MAX_LABEL_NAME_LENGTH: envPositiveInt()
    .max(ingestLimits.maxTagKeyLength)
    .default(ingestLimits.maxTagKeyLength)
    .describe('The longest tag (label) name, on every write path.'),
  SERIES_MAX_LABEL_VALUE_LENGTH: envPositiveInt()
    .max(ingestLimits.maxTagValueLength)
    .default(ingestLimits.maxTagValueLength)
    .describe('The longest tag (label) value, on every write path.'),
  SERIES_MAX_NEW_PER_MINUTE: envNonNegativeInt()
    .default(0)
    .describe(
      'New series (organization, host, metric, tag set) one organization may create per minute on each gateway; 0: no limit.',
    ),
  SERIES_MAX_TRACKED: envPositiveInt()
    .default(500_000)
    .describe('Series a gateway remembers for `SERIES_MAX_NEW_PER_MINUTE` (≈ 150 bytes each).'),
};

const promqlCacheSettledMs = envPositiveInt()
  .default(600_000)
  .describe(
    'Range query steps newer than this are always computed; older ones may be answered from the query cache. Writers record samples that arrive over half of this late, which drops the cached answers that read them.',
  );

const writerFields = {
  /** Each batch upserts every service it touches once, so bigger batches spread that. */
  WRITER_BATCH_MAX_MESSAGES: envPositiveInt()
    .default(20_000)
    .describe('The most host samples a writer stores in one transaction.'),
  /**
   * The gateway's large publishes are snappy-compressed about 4-5 times, so kafkajs's 1 MiB
   * default holds 4-5 MiB of records; 4 MiB of compressed records raised the writer's peak RSS
   * for no measurable gain (docs/benchmarks/compare.md).
   */
  WRITER_FETCH_MAX_BYTES_PER_PARTITION: envPositiveInt()
    .default(1024 * 1024)
    .describe(
      "The most a writer's fetch returns per partition, in bytes as stored (kafkajs caps a whole fetch at 10 MiB).",
    ),
  /**
   * kafkajs fetches from a broker again only once the handlers of its last fetch resolved, so a
   * longer wait merges nothing more from that broker and only stalls catch-up. The in-process
   * bus hands over everything that arrived during the last transaction at once, so a wait there
   * is only latency.
   */
  WRITER_BATCH_MAX_WAIT_MS: envPositiveInt()
    .optional()
    .describe(
      "How long a writer waits for more partitions' records before it writes; unset: 10 ms with Kafka, none on the in-process bus.",
    ),
  /**
   * Partitions go to processes first, then to their consumers (`processBalancedAssigner`), so a
   * replica added gets partitions however many consumers each runs.
   */
  WRITER_CONSUMERS: envPositiveInt()
    .default(2)
    .describe(
      "Kafka consumers per writer process, each writing its own partitions' batches, so one fetches while another writes. A process's consumers share its partitions: those beyond them sit idle.",
    ),
  /** PostgreSQL's COPY of one connection uses one core. */
  WRITER_WRITE_CONNECTIONS: envPositiveInt()
    .default(2)
    .describe(
      "Transactions (connections) each writer consumer writes a batch with at once, the batch's partitions shared out between them.",
    ),
  RAW_RETENTION_DAYS: rawRetentionDays,
  PROMQL_CACHE_SETTLED_MS: promqlCacheSettledMs,
  ALERT_RETENTION_DAYS: envPositiveInt()
    .default(90)
    .describe(
      'Days resolved alerts (with their notifications) and finished investigations are kept.',
    ),
  STORAGE_MOVE_BATCHES_PER_RUN: envNonNegativeInt()
    .default(4)
    .describe(
      'After an upgrade from float8 sample values (TimescaleDB), the chunks of older data the writer moves into the scaled layout per maintenance run (about a minute), each in short transactions while ingest goes on; 0 pauses the move.',
    ),
};

const promqlLookbackDeltaMs = envPositiveInt()
  .default(300_000)
  .describe("How far back an instant selector looks for a series' latest sample.");
const promqlMaxSamples = envPositiveInt()
  .default(50_000_000)
  .describe(
    "The most samples one PromQL query may hold (Prometheus' `--query.max-samples`); past it, an `execution` error.",
  );
const publicUrl = envUrl({ protocols: ['http', 'https'] })
  .optional()
  .describe(
    'The URL people reach the console at, which Alertmanager alerts link to (`generatorURL`) and rule templates read as `externalURL`; unset: no link.',
  );
const alertmanagerResendMs = envPositiveInt()
  .default(60_000)
  .describe(
    "How often active alerts are posted again to Alertmanagers (Prometheus' resend delay; a rule file's alerts as their evaluations fall, resolved ones for 15 minutes); they stay firing there for 4 times this (or 4 group intervals).",
  );
const ruleEvaluationIntervalSeconds = envPositiveInt()
  .default(60)
  .describe(
    "A Prometheus rule group's evaluation interval, unless the group sets its own `interval`.",
  );

const evaluatorFields = {
  EVALUATOR_RULE_POLL_MS: envPositiveInt()
    .default(1_000)
    .describe(
      'How often an idle evaluator checks whether alert rules changed (before each batch it checks anyway).',
    ),
  RULE_EVALUATION_INTERVAL_SECONDS: ruleEvaluationIntervalSeconds,
  RULE_QUERY_TIMEOUT_MS: envPositiveInt()
    .default(10_000)
    .describe(
      "The time limit of one Prometheus rule's query (and of each query its templates make).",
    ),
  RULE_GROUP_MAX_CONCURRENT_EVALUATIONS: envPositiveInt()
    .default(8)
    .describe(
      'Prometheus rule group evaluations in flight at once per evaluator; the others wait for a free place, most overdue first. Each holds a few of its DATABASE_POOL_MAX connections while it queries.',
    ),
  RULE_GROUP_WRITE_WAIT_MS: envPositiveInt()
    .default(10_000)
    .describe(
      "How long a Prometheus rule group's evaluation waits for the writers to store the samples accepted before its time (so that it sees them, as Prometheus would); past it, the evaluation reads what is stored.",
    ),
  PROMQL_LOOKBACK_DELTA_MS: promqlLookbackDeltaMs,
  PROMQL_MAX_SAMPLES: promqlMaxSamples,
  PUBLIC_URL: publicUrl,
  NOTIFIER_ALERTMANAGER_RESEND_MS: alertmanagerResendMs,
};

export const notifierFields = {
  NOTIFIER_POLL_MS: envPositiveInt()
    .default(500)
    .describe('How often the notifier looks for due outbox rows.'),
  NOTIFIER_MAX_ATTEMPTS: envPositiveInt()
    .default(10)
    .describe('Delivery attempts per message before it is marked `failed`.'),
  NOTIFIER_RETRY_BASE_MS: envPositiveInt()
    .default(5_000)
    .describe(
      'The wait before the first retry; each next one waits twice as long, up to `NOTIFIER_RETRY_MAX_MS`.',
    ),
  NOTIFIER_RETRY_MAX_MS: envPositiveInt()
    .default(30 * 60_000)
    .describe('The longest wait between two delivery attempts.'),
  NOTIFIER_HTTP_TIMEOUT_MS: envPositiveInt()
    .default(10_000)
    .describe('A Slack or webhook request without an answer after this long is a failed attempt.'),
  NOTIFIER_ALLOWED_TARGET_NETWORKS: notifierAllowedTargetNetworks,
  SMTP_URL: envUrl({ protocols: ['smtp', 'smtps'] })
    .optional()
    .describe(
      'SMTP server for email notifications, e.g. `smtp://user:pass@mail:587`; unset: email attempts fail visibly.',
    ),
  NOTIFIER_ALERTMANAGER_RESEND_MS: alertmanagerResendMs,
  PUBLIC_URL: publicUrl,
};

export const investigatorFields = {
  INVESTIGATOR_POLL_MS: envPositiveInt()
    .default(500)
    .describe('How often the investigator looks for queued investigations.'),
  INVESTIGATOR_LEASE_MS: envPositiveInt()
    .default(120_000)
    .describe('A running investigation whose investigator died is taken over after this long.'),
  INVESTIGATOR_MAX_ATTEMPTS: envPositiveInt()
    .default(3)
    .describe('Attempts at one investigation before it is `failed`.'),
  /** The evaluator reads the stream independently of the writer and is often ahead. */
  INVESTIGATOR_EVIDENCE_WAIT_MS: envPositiveInt()
    .default(30_000)
    .describe(
      'The longest an investigation waits for the writer to store the samples its alert fired on.',
    ),
  LLM_BASE_URL: envUrl({ protocols: ['http', 'https'] })
    .optional()
    .describe(
      'An OpenAI-compatible endpoint (…/v1) that may reword the narrative of investigations; unset: nothing is called.',
    ),
  LLM_API_KEY: envString().optional().describe('The key sent to `LLM_BASE_URL`.'),
  LLM_MODEL: envString().default('gpt-4o-mini').describe('The model asked at `LLM_BASE_URL`.'),
  LLM_TIMEOUT_MS: envPositiveInt()
    .default(10_000)
    .describe(
      "The longest wait for `LLM_BASE_URL`'s answer (at most a quarter of `INVESTIGATOR_LEASE_MS`).",
    ),
};

/** The query API (role `api`, and role `all` on the gateway's port). */
export const apiFields = {
  SERVICE_STALE_AFTER_SECONDS: baseConfigFields.SERVICE_STALE_AFTER_SECONDS,
  API_KEY_CACHE_TTL_MS: apiKeyCacheTtlMs,
  NOTIFIER_ALLOWED_TARGET_NETWORKS: notifierAllowedTargetNetworks,
  PROMQL_MAX_SAMPLES: promqlMaxSamples,
  PROMQL_TIMEOUT_MS: envPositiveInt()
    .default(30_000)
    .describe(
      "A PromQL query's time limit (503 `timeout` past it), also the most a request's `timeout` may ask for.",
    ),
  PROMQL_LOOKBACK_DELTA_MS: promqlLookbackDeltaMs,
  PROMQL_CACHE_MAX_BYTES: envNonNegativeInt()
    .default(268_435_456)
    .describe(
      "The memory the api's cache of range query results may take, in bytes (the least recently used go first); 0 turns the cache off.",
    ),
  PROMQL_CACHE_SETTLED_MS: promqlCacheSettledMs,
  REDIS_URL: baseConfigFields.REDIS_URL,
  DATABASE_READ_URL: envPostgresUrl()
    .optional()
    .describe(
      "A standby (or several hosts) for the reads that may lag: PromQL, remote read, and the services' listing, detail and history; writes and keys stay on `DATABASE_URL`. Unset: `DATABASE_URL`.",
    ),
  RULES_MAX_PER_ORG: envPositiveInt()
    .default(10_000)
    .describe('The Prometheus rules one organization may load, over all its rule groups.'),
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
    ...sampleShardFields,
    ...busFields,
    ...consumerFields,
    ...writerFields,
  })
  .superRefine(checkConsumerTimings);
const evaluatorConfigSchema = z
  .object({
    ...baseFields,
    ...databaseFields,
    ...sampleShardFields,
    ...busFields,
    ...consumerFields,
    ...evaluatorFields,
  })
  .superRefine(checkConsumerTimings);
const apiConfigSchema = z.object({
  ...baseFields,
  ...databaseFields,
  ...sampleShardFields,
  ...apiFields,
});
const notifierConfigSchema = z.object({
  ...baseFields,
  ...databaseFields,
  ...notifierFields,
});
const investigatorConfigSchema = z.object({
  ...baseFields,
  ...databaseFields,
  ...sampleShardFields,
  ...investigatorFields,
});
/** Every role in one process: Kafka and a database of its own are optional. */
export const allConfigSchema = z
  .object({
    ...baseFields,
    ...databaseFields,
    ...embeddedDatabaseFields,
    ...sampleShardFields,
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
    CONSUMERS_SEMI_SPACE_MB: envPositiveInt()
      .default(16)
      .describe(
        "Role `all`: each of the two semi-spaces of the consumers thread's young generation, in MiB (its `--max-semi-space-size`; the main thread takes the process's flag).",
      ),
    /** 60 against 100: a lower peak RSS under the batched load, the same throughput (docs/benchmarks/compare.md). */
    HEAP_GROWING_PERCENT: envPositiveInt()
      .default(60)
      .describe(
        "Role `all`: how far, in percent, either thread's old generation grows past what survived its last full collection (V8's `--heap-growing-percent`, whose own choice is up to 300).",
      ),
  })
  .superRefine(checkConsumerTimings);
/** `migrate`, `orgs`, `keys`: a database (or the embedded one) and how to migrate it. */
export const adminConfigSchema = z.object({
  ...logFields,
  ...embeddedDatabaseFields,
  ...sampleShardFields,
  // `monitor shards`: the topic whose partitions the control database maps to shards, and the
  // Kafka a move's marker record goes through.
  SAMPLES_TOPIC: busFields.SAMPLES_TOPIC,
  SAMPLES_TOPIC_PARTITIONS: busFields.SAMPLES_TOPIC_PARTITIONS,
  KAFKA_BROKERS: kafkaBrokers.optional(),
  KAFKA_CLIENT_ID: busFields.KAFKA_CLIENT_ID,
  // A move copies again what the writers may still record as a late write.
  PROMQL_CACHE_SETTLED_MS: promqlCacheSettledMs,
  ...migrationFields,
  // `monitor rules load` holds an organization to the ruler API's limit.
  RULES_MAX_PER_ORG: apiFields.RULES_MAX_PER_ORG,
});

/** Each command's schema, by the name the configuration reference gives it. */
export const commandConfigSchemas = {
  gateway: gatewayConfigSchema,
  writer: writerConfigSchema,
  evaluator: evaluatorConfigSchema,
  api: apiConfigSchema,
  notifier: notifierConfigSchema,
  investigator: investigatorConfigSchema,
  all: allConfigSchema,
  commands: adminConfigSchema,
} as const;

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
export type SampleShardConfig = SliceOf<typeof sampleShardFields>;

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
    exemplarRetentionDays: config.EXEMPLAR_RETENTION_DAYS,
    rollup1mRetentionDays: config.ROLLUP_1M_RETENTION_DAYS,
    rollup1hRetentionDays: config.ROLLUP_1H_RETENTION_DAYS,
    compressAfterHours:
      config.COMPRESS_AFTER_HOURS ??
      (config.COMPRESS_AFTER_DAYS === undefined ? undefined : config.COMPRESS_AFTER_DAYS * 24),
    jobIntervalSeconds: config.STORAGE_JOB_INTERVAL_SECONDS,
  };
}
