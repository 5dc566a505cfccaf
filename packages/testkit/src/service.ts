/** The servers the integration tests and the benchmark run against. */
export const serviceNames = ['postgres', 'timescale', 'kafka', 'redis'] as const;
export type ServiceName = (typeof serviceNames)[number];

/** The environment variable that points at each service, read first and exported by the CLI. */
export const serviceEnvNames = {
  postgres: 'DATABASE_URL',
  timescale: 'TIMESCALE_URL',
  kafka: 'KAFKA_BROKERS',
  redis: 'REDIS_URL',
} as const satisfies Record<ServiceName, string>;

/** Where a running service came from, which decides who stops it. */
type ServiceOrigin = 'env' | 'container' | 'native';

export type RunningService = {
  name: ServiceName;
  /** A connection URL (or, for Kafka, comma-separated host:port brokers). */
  url: string;
  origin: ServiceOrigin;
  /** Stops what this process started; a no-op for a service given by the environment. */
  stop(): Promise<void>;
};

/** Starts one service as a native process or a container; the caller has checked the env. */
export type ServiceLauncher = {
  native(): Promise<RunningService>;
  container(): Promise<RunningService>;
};
