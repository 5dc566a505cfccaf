// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from './database.js';
import { createDatabase } from './database.js';
import type { RestartablePostgres } from '@monitor/testkit';
import { startRestartablePostgres } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';

/**
 * postgres.js 3.4.9 is patched (patches/postgres+3.4.9.patch): a small write scheduled just
 * before its connection closed threw from setImmediate and killed the process, and a connection
 * torn down with a write pending never flushed again (every later query on it hung). A
 * PostgreSQL restart did both to the roles.
 */
describe('the database pool when the server drops its connection', () => {
  let admin: Database;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => {
    uncaught.push(err);
  };

  beforeAll(() => {
    admin = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    process.on('uncaughtException', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    await admin?.close();
  });

  it('settles the queries written as the server closed, and serves later ones', async () => {
    const db = createDatabase({
      url: serviceUrl('postgres'),
      maxConnections: 1,
      applicationName: 'dropped-connection',
    });
    try {
      for (let round = 0; round < 20; round++) {
        const [me] = await db.sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await admin.sql`select pg_terminate_backend(${me!.pid})`;
        // Written (scheduled) while the close is on its way: each settles (ok or
        // CONNECTION_CLOSED), none throws out of the driver, none hangs.
        await db.sql`select 1`.catch((err: unknown) => err);
        await db.sql`select 2`.catch((err: unknown) => err);
        // The pool then connects again and serves.
        const [after] = await db.sql<{ one: number }[]>`select 1 as one`;
        expect(after?.one).toBe(1);
      }
      expect(uncaught).toEqual([]);
    } finally {
      await db.close();
    }
  });

  describe('while the server is down and after it is back', () => {
    let server: RestartablePostgres;

    beforeAll(async () => {
      server = await startRestartablePostgres();
    });

    afterAll(async () => {
      await server?.destroy();
    });

    it('refuses every query while down, more queries than connections included, then serves', async () => {
      const db = createDatabase({ url: server.url, maxConnections: 2, connectTimeoutSeconds: 5 });
      try {
        await db.sql`select 1`;
        await server.stop();
        // A connection whose connect was refused stayed "connecting" for good: with both of
        // the pool's stuck, every later query waited forever.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 6 }, () => db.sql`select 1`),
        );
        expect(outcomes.map((outcome) => outcome.status)).toEqual(Array(6).fill('rejected'));
        await server.start();
        const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
        expect(row?.one).toBe(1);
        expect(uncaught).toEqual([]);
      } finally {
        await db.close();
      }
    });
  });
});
