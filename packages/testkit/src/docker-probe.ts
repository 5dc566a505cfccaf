import { getContainerRuntimeClient } from 'testcontainers';

const probeTimeoutMs = 2_000;

/**
 * Whether the tests' services may run as containers, from `MONITOR_TESTKIT_DOCKER`:
 * - unset or `never`: no (native processes, the fast default);
 * - `auto`: when a Docker engine answers, each falling back to its native process when its
 *   container cannot start;
 * - `always`: containers only; a container that cannot start fails the run (CI's proof that the
 *   testcontainers path works).
 */
export type DockerPolicy = 'never' | 'auto' | 'always';

export function dockerPolicy(env: NodeJS.ProcessEnv = process.env): DockerPolicy {
  const value = env['MONITOR_TESTKIT_DOCKER']?.trim() ?? '';
  if (value === '' || value === 'never') return 'never';
  if (value === 'auto' || value === 'always') return value;
  throw new Error(`MONITOR_TESTKIT_DOCKER=${value}: expected never, auto or always`);
}

/**
 * Whether a Docker engine answers, decided within 2 s: testcontainers itself fails fast when
 * there is no socket, but a DOCKER_HOST pointing at a silent host could hang without the bound.
 * False without asking when the policy is `never`.
 */
export async function isDockerAvailable(): Promise<boolean> {
  if (dockerPolicy() === 'never') return false;
  return await engineAnswers();
}

/** Whether a Docker engine answers within 2 s, whatever the policy. */
async function engineAnswers(): Promise<boolean> {
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
