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
 * PostgreSQL restart did both to the roles. The array-types query it runs on each new connection
 * rejected with nobody listening when the server went away meanwhile, which killed the process too.
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
    process.on('unhandledRejection', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    process.off('unhandledRejection', onUncaught);
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

    it('fails only the query when the server stops while a new connection fetches its array types', async () => {
      // The catalog that query reads is locked, so the new connection waits in it for sure.
      const locker = createDatabase({ url: server.url, maxConnections: 1 });
      const db = createDatabase({
        url: server.url,
        maxConnections: 1,
        applicationName: 'array-types-fetch',
      });
      try {
        const lock = await locker.sql.reserve();
        let outcome: Promise<unknown>;
        try {
          await lock`begin`;
          await lock`lock table pg_catalog.pg_type in access exclusive mode`;
          outcome = db.sql`select 1`.then(
            () => 'served',
            (err: unknown) => err,
          );
          for (;;) {
            // The locking session's lookups never wait; it needs a fresh view of the activity.
            await lock`select pg_stat_clear_snapshot()`;
            const [row] = await lock<{ waiting: number }[]>`
              select count(*)::int as waiting from pg_stat_activity
              where application_name = 'array-types-fetch' and wait_event_type = 'Lock'
                and query like '%pg_catalog.pg_type%'
            `;
            if (row!.waiting > 0) break;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          await server.stop();
        } finally {
          lock.release();
        }
        expect(await outcome).toBeInstanceOf(Error);
        await server.start();
        const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
        expect(row?.one).toBe(1);
        expect(uncaught).toEqual([]);
      } finally {
        await server.start();
        await Promise.all([db.close(), locker.close({ timeoutSeconds: 0 })]);
      }
    });
  });
});
