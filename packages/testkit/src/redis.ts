import { RedisContainer } from '@testcontainers/redis';
import { Redis } from 'ioredis';
import { execFileSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
import { containerImage } from './container-images.js';
import { getFreePort } from './free-port.js';
import { createLogFile, waitUntilReady } from './postgres.js';
import type { ServiceLauncher } from './service.js';
import { createServiceDir } from './service-dir.js';
import type { SupervisedProcess } from './supervised-process.js';
import { startSupervised } from './supervised-process.js';

const readyTimeoutMs = 15_000;

/**
 * Redis: `redis-server` on a free 127.0.0.1 port with persistence off, or a container of
 * redis:7-alpine (or MONITOR_TESTKIT_REDIS_IMAGE).
 */
export const redisLauncher: ServiceLauncher = {
  async native() {
    const bin = findRedisServer();
    const port = await getFreePort();
    const dir = createServiceDir('redis');
    const logFile = createLogFile(join(dir, 'redis-server.log'));
    const server = startSupervised({
      command: bin,
      args: [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      cwd: dir,
      env: stringEnv(),
      logFile,
      removeOnExit: dir,
    });
    const url = `redis://127.0.0.1:${port}`;
    await waitForPing(url, server);
    return { name: 'redis', url, origin: 'native', stop: () => server.stop() };
  },

  async container() {
    const container = await new RedisContainer(containerImage('redis')).start();
    return {
      name: 'redis',
      url: container.getConnectionUrl(),
      origin: 'container',
      stop: async () => {
        await container.stop();
      },
    };
  },
};

/** REDIS_SERVER_BIN, else `redis-server` on the PATH, else Debian's /usr/bin/redis-server. */
function findRedisServer(): string {
  const fromEnv = process.env['REDIS_SERVER_BIN'];
  const candidates =
    fromEnv !== undefined && fromEnv !== ''
      ? [fromEnv]
      : [
          ...(process.env['PATH'] ?? '')
            .split(':')
            .filter((dir) => dir !== '')
            .map((dir) => join(dir, 'redis-server')),
          '/usr/bin/redis-server',
        ];
  const found = candidates.find(isExecutable);
  if (found !== undefined) return found;
  throw new Error(
    `no redis-server executable (looked for ${fromEnv !== undefined && fromEnv !== '' ? fromEnv : 'redis-server on the PATH and /usr/bin/redis-server'}): ` +
      'apt-get install redis-server, point REDIS_SERVER_BIN at it, or set REDIS_URL to a running server',
  );
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    // A directory passes X_OK too; asking the binary its version settles it.
    execFileSync(path, ['--version'], { stdio: 'ignore', timeout: 5_000 });
    return true;
  } catch {
    return false;
  }
}

/** Resolves once PING answers; see `waitUntilReady`. */
async function waitForPing(url: string, server: SupervisedProcess): Promise<void> {
  await waitUntilReady(server, {
    what: 'redis-server',
    timeoutMs: readyTimeoutMs,
    probe: async () => {
      const client = new Redis(url, {
        lazyConnect: true,
        connectTimeout: 1_000,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
        enableOfflineQueue: false,
      });
      // Refused connections are expected while the server starts; connect() rejects as well.
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.ping();
      } finally {
        client.disconnect();
      }
    },
  });
}

/** The watchdog passes the environment on verbatim, so it must hold strings only. */
function stringEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}
