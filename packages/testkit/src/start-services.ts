import { dockerPolicy, isDockerAvailable } from './docker-probe.js';
import { kafkaLauncher } from './kafka.js';
import { postgresLauncher } from './postgres.js';
import { redisLauncher } from './redis.js';
import type { RunningService, ServiceLauncher, ServiceName } from './service.js';
import { serviceEnvNames } from './service.js';
import { timescaleLauncher } from './timescale.js';

const defaultLaunchers: Record<ServiceName, ServiceLauncher> = {
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

/** A progress line; `warn` when something went wrong that the harness worked around. */
type ServicesLog = (message: string, level?: 'info' | 'warn') => void;

export type StartServicesOptions = {
  /** Where the service URLs are looked up first; `process.env` when omitted. */
  env?: NodeJS.ProcessEnv;
  log?: ServicesLog;
  /** How each service starts; the real launchers when omitted (tests pass fakes). */
  launchers?: Readonly<Record<ServiceName, ServiceLauncher>>;
  /** Whether to try containers first; the 2 s Docker probe when omitted. */
  isDockerAvailable?: () => Promise<boolean>;
};

/**
 * Brings up each named service, taking each from the first source that has it:
 * 1. its URL in the environment (`DATABASE_URL`, `TIMESCALE_URL`, `KAFKA_BROKERS`, `REDIS_URL`);
 * 2. a container, when `MONITOR_TESTKIT_DOCKER` is `auto` or `always` and a Docker engine
 *    answers within 2 s;
 * 3. a native process on a free 127.0.0.1 port (the default), also when its container could not
 *    start (an engine that answers but cannot pull the image, e.g. without a reachable registry):
 *    that service falls back with a warning saying why, unless the policy is `always`.
 * If any fails, the ones already up are stopped before the error is thrown.
 */
export async function startServices(
  names: readonly ServiceName[],
  options: StartServicesOptions = {},
): Promise<StartedServices> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const launchers = options.launchers ?? defaultLaunchers;
  const wanted = [...new Set(names)];
  const fromEnv = wanted.filter((name) => nonEmpty(env[serviceEnvNames[name]]));
  const toStart = wanted.filter((name) => !fromEnv.includes(name));
  const policy = dockerPolicy(env);
  const useDocker =
    toStart.length > 0 && (await (options.isDockerAvailable ?? isDockerAvailable)());
  if (policy === 'always' && toStart.length > 0 && !useDocker) {
    throw new Error('MONITOR_TESTKIT_DOCKER=always, but no Docker engine answered within 2 s');
  }

  const results = await Promise.allSettled(
    wanted.map(async (name): Promise<RunningService> => {
      const url = env[serviceEnvNames[name]];
      if (url !== undefined && nonEmpty(url)) {
        log(`${name}: using ${serviceEnvNames[name]} from the environment`);
        return { name, url, origin: 'env', stop: () => Promise.resolve() };
      }
      const startedAt = Date.now();
      const service = useDocker
        ? policy === 'always'
          ? await launchers[name].container()
          : await containerOrNative(name, launchers[name], log)
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

/**
 * The container, or the native process when the container cannot start. Docker answering says
 * nothing about whether its images can be pulled (no registry, a proxy, a rate limit) or run;
 * the native process is the source that needs neither, so it is the one to fall back on.
 */
async function containerOrNative(
  name: ServiceName,
  launcher: ServiceLauncher,
  log: ServicesLog,
): Promise<RunningService> {
  let containerError: unknown;
  try {
    return await launcher.container();
  } catch (err) {
    containerError = err;
  }
  log(
    `${name}: the container did not start (${firstLine(describe(containerError))}); ` +
      'starting a native process instead',
    'warn',
  );
  try {
    return await launcher.native();
  } catch (err) {
    throw new Error(
      `no container (${describe(containerError)}) and no native process (${describe(err)})`,
      { cause: err },
    );
  }
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

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
