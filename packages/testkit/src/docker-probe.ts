import { getContainerRuntimeClient } from 'testcontainers';

const probeTimeoutMs = 2_000;

/**
 * Whether a Docker engine answers, decided within 2 s: testcontainers itself fails fast when
 * there is no socket, but a DOCKER_HOST pointing at a silent host could hang without the bound.
 * `MONITOR_TESTKIT_DOCKER=never` skips the probe.
 */
export async function isDockerAvailable(): Promise<boolean> {
  if (process.env['MONITOR_TESTKIT_DOCKER'] === 'never') return false;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), probeTimeoutMs);
  });
  const probe = getContainerRuntimeClient().then(
    () => true,
    () => false,
  );
  try {
    return await Promise.race([probe, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
