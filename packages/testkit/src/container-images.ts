import type { ServiceName } from './service.js';

/** The public upstream images of the testcontainers path. */
const upstreamImages = {
  postgres: 'postgres:15-alpine',
  timescale: 'timescale/timescaledb:2.28.3-pg15',
  // The broker version the native path runs (../kafka/pom.xml), configured by KAFKA_* variables.
  kafka: 'apache/kafka:4.1.1',
  redis: 'redis:7-alpine',
} as const satisfies Record<ServiceName, string>;

const imageEnvNames = {
  postgres: 'MONITOR_TESTKIT_POSTGRES_IMAGE',
  timescale: 'MONITOR_TESTKIT_TIMESCALE_IMAGE',
  kafka: 'MONITOR_TESTKIT_KAFKA_IMAGE',
  redis: 'MONITOR_TESTKIT_REDIS_IMAGE',
} as const satisfies Record<ServiceName, string>;

/**
 * The image a service's container runs: `MONITOR_TESTKIT_<SERVICE>_IMAGE` when set (the local
 * stand-ins tools/build-machine/build-local-images.sh builds for a machine without a registry; it
 * lists them in ~/.cache/monitor-images/images.env), else the public upstream image. A replacement must
 * behave as the upstream image does (the same environment variables, ports and log lines).
 */
export function containerImage(service: ServiceName, env: NodeJS.ProcessEnv = process.env): string {
  const fromEnv = env[imageEnvNames[service]]?.trim();
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : upstreamImages[service];
}
