import { PostgreSqlContainer } from '@testcontainers/postgresql';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';
import { containerImage } from './container-images.js';
import { getFreePort } from './free-port.js';
import { createLogFile, waitForPostgres } from './postgres.js';
import type { ServiceLauncher } from './service.js';
import { createServiceDir } from './service-dir.js';
import { nodeScript, startSupervised } from './supervised-process.js';

const extensionQuery = "select extversion from pg_extension where extname = 'timescaledb'";
/** PGlite compiles its WASM and loads timescaledb on start: ~5 s idle, over 20 s on a busy machine. */
const nativeReadyTimeoutMs = 60_000;

/**
 * TimescaleDB for tests: a container of the official image (or MONITOR_TESTKIT_TIMESCALE_IMAGE), or natively PGlite with the
 * timescaledb extension (2.23) served over the wire protocol by pglite-socket (see
 * pglite-server.ts, which also works around pglite-socket's crashes).
 *
 * The native server has real limits that callers must respect:
 * - it serves ONE client connection at a time; others wait in a queue until it closes, so use a
 *   pool of one (postgres.js `max: 1`) and end clients promptly. Whatever needs a second
 *   connection at the same time waits for ever (postgres.js `sql.listen` opens one: LISTEN is out);
 * - each new connection starts from a reset session (ROLLBACK, DISCARD ALL); keep postgres.js
 *   `onnotice: () => {}`, as PGlite itself logs at DEBUG level;
 * - it has no background workers: refresh, compression and retention policies never run by
 *   themselves; call `refresh_continuous_aggregate` (outside a transaction) yourself;
 * - no `COPY ... FROM STDIN` and at most 32,767 bind parameters per statement (both fail with an
 *   error naming the limit); insert batches through `unnest` of a few array parameters;
 * - it is PostgreSQL 17 in WASM with a single database: the user, password and database names in
 *   the URL are ignored (you are `postgres` in `template1`), so isolate tests by table or schema
 *   names;
 * - it has no TLS: it answers SSL and GSS encryption requests with 'N', so libpq clients (psql)
 *   connect in plain text with their default `sslmode=prefer` (`sslmode=require` fails).
 */
export const timescaleLauncher: ServiceLauncher = {
  async native() {
    const port = await getFreePort();
    const dir = createServiceDir('timescale');
    const logFile = createLogFile(join(dir, 'pglite-server.log'));
    const script = nodeScript(
      new URL(`./pglite-server${extensionOf(import.meta.url)}`, import.meta.url).href,
    );
    const server = startSupervised({
      command: script.command,
      args: [...script.args, String(port)],
      // `--import tsx` resolves from the working directory, so run inside this package.
      cwd: packageDir(),
      env: stringEnv(),
      logFile,
      removeOnExit: dir,
      stopSignal: 'SIGTERM',
    });
    // PGlite asks for a password and takes any; naming one keeps psql from prompting for it.
    const url = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
    await waitForPostgres(url, {
      server,
      what: 'PGlite with timescaledb',
      query: extensionQuery,
      timeoutMs: nativeReadyTimeoutMs,
    });
    return { name: 'timescale', url, origin: 'native', stop: () => server.stop() };
  },

  async container() {
    const container = await new PostgreSqlContainer(containerImage('timescale')).start();
    const url = container.getConnectionUri();
    // The image preloads the library; the extension still has to exist in the test database.
    const sql = postgres(url, { max: 1, onnotice: () => undefined });
    try {
      await sql.unsafe('create extension if not exists timescaledb');
    } catch (err) {
      await container.stop();
      throw err;
    } finally {
      await sql.end({ timeout: 1 });
    }
    return {
      name: 'timescale',
      url,
      origin: 'container',
      stop: async () => {
        await container.stop();
      },
    };
  },
};

/** packages/testkit, from src/ (tsx) or dist/ (compiled) alike. */
function packageDir(): string {
  return fileURLToPath(new URL('..', import.meta.url));
}

function extensionOf(url: string): string {
  return url.endsWith('.ts') ? '.ts' : '.js';
}

/** The watchdog passes the environment on verbatim, so it must hold strings only. */
function stringEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] => entry[1] !== undefined,
    ),
  );
}
