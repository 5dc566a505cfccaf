import { isDockerAvailable } from './docker-probe.js';
import { kafkaLauncher } from './kafka.js';
import { postgresLauncher } from './postgres.js';
import { redisLauncher } from './redis.js';
import type { RunningService, ServiceLauncher, ServiceName } from './service.js';
import { serviceEnvNames } from './service.js';
import { timescaleLauncher } from './timescale.js';

const launchers: Record<ServiceName, ServiceLauncher> = {
  postgres: postgresLauncher,
  timescale: timescaleLauncher,
  kafka: kafkaLauncher,
  redis: redisLauncher,
};

export type StartedServices = {
  services: RunningService[];
  /** `NAME=url` for every service, e.g. `{ KAFKA_BROKERS: '127.0.0.1:40123' }`. */
  env: Record<string, string>;
  urls: Partial<Record<ServiceName, string>>;
  /** Stops everything this process started; safe to call twice. */
  stop(): Promise<void>;
};

type Log = (message: string) => void;

/**
 * Brings up each named service, taking each from the first source that has it:
 * 1. its URL in the environment (`DATABASE_URL`, `TIMESCALE_URL`, `KAFKA_BROKERS`, `REDIS_URL`);
 * 2. a container, when a Docker engine answers within 2 s;
 * 3. a native process on a free 127.0.0.1 port.
 * If any fails, the ones already up are stopped before the error is thrown.
 */
export async function startServices(
  names: readonly ServiceName[],
  options: { env?: NodeJS.ProcessEnv; log?: Log } = {},
): Promise<StartedServices> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const wanted = [...new Set(names)];
  const fromEnv = wanted.filter((name) => nonEmpty(env[serviceEnvNames[name]]));
  const toStart = wanted.filter((name) => !fromEnv.includes(name));
  const useDocker = toStart.length > 0 && (await isDockerAvailable());

  const results = await Promise.allSettled(
    wanted.map(async (name): Promise<RunningService> => {
      const url = env[serviceEnvNames[name]];
      if (url !== undefined && nonEmpty(url)) {
        log(`${name}: using ${serviceEnvNames[name]} from the environment`);
        return { name, url, origin: 'env', stop: () => Promise.resolve() };
      }
      const startedAt = Date.now();
      const service = useDocker
        ? await launchers[name].container()
        : await launchers[name].native();
      log(`${name}: ${service.origin} ready at ${service.url} in ${Date.now() - startedAt} ms`);
      return service;
    }),
  );

  const services = results.flatMap((result) =>
    result.status === 'fulfilled' ? [result.value] : [],
  );
  const stop = once(() => stopAll(services));
  const failures = results.flatMap((result, index) =>
    result.status === 'rejected' ? [`${wanted[index]}: ${describe(result.reason)}`] : [],
  );
  if (failures.length > 0) {
    await stop();
    throw new Error(`could not start the services the tests need:\n${failures.join('\n')}`);
  }
  return {
    services,
    env: Object.fromEntries(services.map((s) => [serviceEnvNames[s.name], s.url])),
    urls: Object.fromEntries(services.map((s) => [s.name, s.url])),
    stop,
  };
}

async function stopAll(services: RunningService[]): Promise<void> {
  const results = await Promise.allSettled(services.map((service) => service.stop()));
  const failed = results.filter((result) => result.status === 'rejected');
  if (failed.length > 0) throw new Error(`${failed.length} service(s) did not stop cleanly`);
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= fn());
}

function nonEmpty(value: string | undefined): value is string {
  return value !== undefined && value.trim() !== '';
}

function describe(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
