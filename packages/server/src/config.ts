import { z } from 'zod';
import type { ConfigOf } from '@monitor/platform';
import {
  baseConfigFields,
  envList,
  envPositiveInt,
  envString,
  envUrl,
  isNetwork,
} from '@monitor/platform';

/**
 * Every setting of every role, parsed once at start. The names of the API contract come from
 * `baseConfigFields`; the rest tune the pipeline and have safe defaults.
 */
export const serverConfigSchema = z.object({
  ...baseConfigFields,
  SAMPLES_TOPIC: envString().default('metrics.samples.v1'),
  /** Used when the topic does not exist yet; more partitions allow more writer replicas. */
  SAMPLES_TOPIC_PARTITIONS: envPositiveInt().default(6),
  KAFKA_CLIENT_ID: envString().default('monitor'),
  /**
   * How long Kafka waits for a silent consumer before giving its partitions to the rest of the
   * group: the pause a crashed writer or evaluator replica causes (broker minimum 6 s).
   */
  KAFKA_SESSION_TIMEOUT_MS: envPositiveInt().default(30_000),
  /** An ingest request not acknowledged by Kafka within this time answers 503. */
  INGEST_PUBLISH_TIMEOUT_MS: envPositiveInt().default(5_000),
  /** How long the gateway gathers requests into one Kafka produce. */
  INGEST_PRODUCE_LINGER_MS: envPositiveInt().default(2),
  RAW_RETENTION_DAYS: envPositiveInt().default(30),
  SNAPSHOT_RETENTION_DAYS: envPositiveInt().default(7),
  /** Resolved alerts (with their notifications) and finished investigations are kept this long. */
  ALERT_RETENTION_DAYS: envPositiveInt().default(90),
  COMPRESS_AFTER_DAYS: envPositiveInt().default(7),
  /**
   * The most host samples in one transaction. Each batch upserts every service it touches once,
   * so bigger batches of a backlog spread that over more samples.
   */
  WRITER_BATCH_MAX_MESSAGES: envPositiveInt().default(20_000),
  /**
   * The most a writer's fetch returns per partition (kafkajs caps a whole fetch at 10 MiB).
   * Above kafkajs's 1 MiB default: each fetch ends in a transaction, and fewer, bigger ones
   * drain a backlog faster.
   */
  WRITER_FETCH_MAX_BYTES_PER_PARTITION: envPositiveInt().default(4 * 1024 * 1024),
  /**
   * How long the writer waits for more partitions' records before it writes. kafkajs fetches
   * from a broker again only once the handlers of its last fetch resolved, so a longer wait
   * merges nothing more from that broker and only stalls catch-up (measured: 10 ms drained a
   * backlog 25-45 % faster than 100 ms). Short is enough to merge concurrent fetches.
   */
  WRITER_BATCH_MAX_WAIT_MS: envPositiveInt().default(10),
  /**
   * Kafka consumers per writer process, each writing its own partitions' batches in its own
   * transactions, so one fetches and decodes while another writes. More than the topic's
   * partitions leaves some idle.
   */
  WRITER_CONSUMERS: envPositiveInt().default(2),
  DATABASE_POOL_MAX: envPositiveInt().default(10),
  /** How long a revoked API key may still work on a replica that cached it. */
  API_KEY_CACHE_TTL_MS: envPositiveInt().default(15_000),
  /** How often evaluators check whether alert rules changed (a change applies within ~this). */
  EVALUATOR_RULE_POLL_MS: envPositiveInt().default(1_000),
  /** How often the notifier looks for due outbox rows. */
  NOTIFIER_POLL_MS: envPositiveInt().default(500),
  /** Delivery attempts per message before it is marked failed. */
  NOTIFIER_MAX_ATTEMPTS: envPositiveInt().default(10),
  /** The first retry waits this long; each next one twice as long, up to the maximum. */
  NOTIFIER_RETRY_BASE_MS: envPositiveInt().default(5_000),
  NOTIFIER_RETRY_MAX_MS: envPositiveInt().default(30 * 60_000),
  /** A Slack or webhook request without an answer after this long is a failed attempt. */
  NOTIFIER_HTTP_TIMEOUT_MS: envPositiveInt().default(10_000),
  /**
   * Networks (CIDRs such as `10.0.0.0/8`, `fd00::/8`, or single addresses) that Slack and
   * webhook targets may reach although they are internal: loopback, private, link-local (cloud
   * metadata), CGNAT… Empty by default, since tenants choose the targets and the notifier posts
   * from inside the operator's network; a self-hosted install with an internal receiver lists
   * its network here.
   */
  NOTIFIER_ALLOWED_TARGET_NETWORKS: envList({
    item: z.string().refine(isNetwork, {
      error: 'must be a CIDR network such as 10.0.0.0/8 or fd00::/8, or an IP address',
    }),
  }).default([]),
  /** SMTP server for email notifications, e.g. `smtp://user:pass@mail:587`. */
  SMTP_URL: envUrl({ protocols: ['smtp', 'smtps'] }).optional(),
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
  SHUTDOWN_TIMEOUT_MS: envPositiveInt().default(25_000),
  /** Role `all` without DATABASE_URL keeps its embedded PostgreSQL here. */
  MONITOR_DATA_DIR: envString().default('./data'),
});

export type ServerConfig = ConfigOf<typeof serverConfigSchema>;
