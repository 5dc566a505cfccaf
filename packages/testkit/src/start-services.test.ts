import { describe, expect, it } from 'vitest';
import type { RunningService, ServiceLauncher, ServiceName } from './service.js';
import { serviceNames } from './service.js';
import { startServices } from './start-services.js';

/** What testcontainers throws when the engine answers but cannot pull the image. */
const pullFailure = (image: string) =>
  new Error(
    `(HTTP code 500) server error - Get "https://registry-1.docker.io/v2/": dial tcp: ` +
      `lookup registry-1.docker.io on 127.0.0.53:53: no such host\n    at ${image}`,
  );

type Calls = { started: string[]; stopped: string[] };

function running(name: ServiceName, origin: 'container' | 'native', calls: Calls): RunningService {
  return {
    name,
    url: `${origin}://${name}`,
    origin,
    stop: () => {
      calls.stopped.push(`${name}:${origin}`);
      return Promise.resolve();
    },
  };
}

/** Launchers whose containers and native processes succeed or fail as `behaviour` says. */
function fakeLaunchers(
  behaviour: Partial<Record<ServiceName, { container?: 'fails'; native?: 'fails' }>>,
): { launchers: Record<ServiceName, ServiceLauncher>; calls: Calls } {
  const calls: Calls = { started: [], stopped: [] };
  const launcher = (name: ServiceName): ServiceLauncher => ({
    container: () => {
      calls.started.push(`${name}:container`);
      return behaviour[name]?.container === 'fails'
        ? Promise.reject(pullFailure(name))
        : Promise.resolve(running(name, 'container', calls));
    },
    native: () => {
      calls.started.push(`${name}:native`);
      return behaviour[name]?.native === 'fails'
        ? Promise.reject(new Error(`${name} binaries not found`))
        : Promise.resolve(running(name, 'native', calls));
    },
  });
  const launchers = Object.fromEntries(serviceNames.map((name) => [name, launcher(name)]));
  return { launchers: launchers as Record<ServiceName, ServiceLauncher>, calls };
}

function collectingLog() {
  const lines: { message: string; level: string }[] = [];
  return {
    lines,
    log: (message: string, level: 'info' | 'warn' = 'info') => lines.push({ message, level }),
  };
}

const dockerAnswers = () => Promise.resolve(true);
const noDocker = () => Promise.resolve(false);

describe('startServices', () => {
  it('falls back to the native process, with a warning saying why, when a container cannot start', async () => {
    const { launchers, calls } = fakeLaunchers({ postgres: { container: 'fails' } });
    const { lines, log } = collectingLog();
    const started = await startServices(['postgres', 'redis'], {
      env: {},
      log,
      launchers,
      isDockerAvailable: dockerAnswers,
    });

    expect(started.urls).toEqual({ postgres: 'native://postgres', redis: 'container://redis' });
    expect(started.services.map((s) => s.origin)).toEqual(['native', 'container']);
    expect(calls.started).toEqual(['postgres:container', 'redis:container', 'postgres:native']);
    const warnings = lines.filter((line) => line.level === 'warn').map((line) => line.message);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^postgres: the container did not start \(.*no such host\)/);
    expect(warnings[0]).toContain('starting a native process instead');
    expect(warnings[0]).not.toContain('\n');
    await started.stop();
    expect(calls.stopped.sort()).toEqual(['postgres:native', 'redis:container']);
  });

  it('starts containers only, without a warning, when they start', async () => {
    const { launchers, calls } = fakeLaunchers({});
    const { lines, log } = collectingLog();
    const started = await startServices(['kafka'], {
      env: {},
      log,
      launchers,
      isDockerAvailable: dockerAnswers,
    });
    expect(started.env).toEqual({ KAFKA_BROKERS: 'container://kafka' });
    expect(calls.started).toEqual(['kafka:container']);
    expect(lines.filter((line) => line.level === 'warn')).toEqual([]);
  });

  it('starts native processes without trying containers when no Docker engine answers', async () => {
    const { launchers, calls } = fakeLaunchers({});
    const started = await startServices(['timescale'], {
      env: {},
      launchers,
      isDockerAvailable: noDocker,
    });
    expect(started.urls).toEqual({ timescale: 'native://timescale' });
    expect(calls.started).toEqual(['timescale:native']);
  });

  it('takes a service from its environment URL without probing or starting anything', async () => {
    const { launchers, calls } = fakeLaunchers({});
    let probed = false;
    const started = await startServices(['redis'], {
      env: { REDIS_URL: 'redis://elsewhere:6379' },
      launchers,
      isDockerAvailable: () => {
        probed = true;
        return Promise.resolve(true);
      },
    });
    expect(started.urls).toEqual({ redis: 'redis://elsewhere:6379' });
    expect(probed).toBe(false);
    expect(calls.started).toEqual([]);
  });

  it('fails naming both reasons when neither the container nor the native process starts, and stops the rest', async () => {
    const { launchers, calls } = fakeLaunchers({ kafka: { container: 'fails', native: 'fails' } });
    await expect(
      startServices(['redis', 'kafka'], {
        env: {},
        launchers,
        isDockerAvailable: dockerAnswers,
      }),
    ).rejects.toThrow(
      /kafka: no container \(\(HTTP code 500\)[\s\S]*\) and no native process \(kafka binaries not found\)/,
    );
    expect(calls.stopped).toEqual(['redis:container']);
  });

  it('with MONITOR_TESTKIT_DOCKER=always, fails on a container that cannot start instead of falling back', async () => {
    const { launchers, calls } = fakeLaunchers({ postgres: { container: 'fails' } });
    await expect(
      startServices(['redis', 'postgres'], {
        env: { MONITOR_TESTKIT_DOCKER: 'always' },
        launchers,
        isDockerAvailable: dockerAnswers,
      }),
    ).rejects.toThrow(/postgres: \(HTTP code 500\)/);
    expect(calls.started).toEqual(['redis:container', 'postgres:container']);
    expect(calls.stopped).toEqual(['redis:container']);
  });

  it('with MONITOR_TESTKIT_DOCKER=always, fails when no Docker engine answers', async () => {
    const { launchers, calls } = fakeLaunchers({});
    await expect(
      startServices(['redis'], {
        env: { MONITOR_TESTKIT_DOCKER: 'always' },
        launchers,
        isDockerAvailable: noDocker,
      }),
    ).rejects.toThrow(/no Docker engine answered/);
    expect(calls.started).toEqual([]);
  });
});
