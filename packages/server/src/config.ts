import { z } from 'zod';
import type { ConfigOf } from '@monitor/platform';
import { baseConfigFields, envPositiveInt, envString } from '@monitor/platform';

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
  /** An ingest request not acknowledged by Kafka within this time answers 503. */
  INGEST_PUBLISH_TIMEOUT_MS: envPositiveInt().default(5_000),
  /** How long the gateway gathers requests into one Kafka produce. */
  INGEST_PRODUCE_LINGER_MS: envPositiveInt().default(2),
  RAW_RETENTION_DAYS: envPositiveInt().default(30),
  SNAPSHOT_RETENTION_DAYS: envPositiveInt().default(7),
  COMPRESS_AFTER_DAYS: envPositiveInt().default(7),
  WRITER_BATCH_MAX_MESSAGES: envPositiveInt().default(5_000),
  /**
   * How long the writer waits for more partitions' records before it writes. kafkajs fetches
   * from a broker again only once the handlers of its last fetch resolved, so a longer wait
   * merges nothing more from that broker and only stalls catch-up (measured: 10 ms drained a
   * backlog 25-45 % faster than 100 ms). Short is enough to merge concurrent fetches.
   */
  WRITER_BATCH_MAX_WAIT_MS: envPositiveInt().default(10),
  DATABASE_POOL_MAX: envPositiveInt().default(10),
  /** How long a revoked API key may still work on a replica that cached it. */
  API_KEY_CACHE_TTL_MS: envPositiveInt().default(15_000),
  SHUTDOWN_TIMEOUT_MS: envPositiveInt().default(25_000),
  /** Role `all` without DATABASE_URL keeps its embedded PostgreSQL here. */
  MONITOR_DATA_DIR: envString().default('./data'),
});

export type ServerConfig = ConfigOf<typeof serverConfigSchema>;
