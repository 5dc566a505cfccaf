// @services postgres
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from './database.js';
import { createDatabase } from './database.js';
import type { RestartablePostgres } from '@monitor/testkit';
import { startRestartablePostgres } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';

/**
 * What the driver (@monitor/postgres-driver, changes listed in its CHANGES.md) does for the pool
 * when the server goes away: a small write scheduled just before its connection closed threw
 * from setImmediate and killed the process, and a connection torn down with a write pending
 * never flushed again (every later query on it hung). A PostgreSQL restart did both to the
 * roles. The array-types query it runs on each new connection rejected with nobody listening
 * when the server went away meanwhile, which killed the process too.
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

  it('fails the queries of a reserved connection whose server closed it, and serves later ones', async () => {
    const db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 2 });
    try {
      const reserved = await db.sql.reserve();
      try {
        const [me] = await reserved<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await admin.sql`select pg_terminate_backend(${me!.pid})`;
        // A reservation is pinned to its connection: each query on it is written to a socket
        // that is gone, and fails instead of throwing out of the driver.
        for (let attempt = 0; attempt < 3; attempt++) {
          const failed = await reserved`select 1`.then(
            () => undefined,
            (err: unknown) => err,
          );
          expect(failed).toBeInstanceOf(Error);
        }
      } finally {
        reserved.release();
      }
      const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
      expect(row?.one).toBe(1);
      expect(uncaught).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('passes over a host that does not answer within the connect timeout for the next one', async () => {
    // Accepts the TCP connection and never answers the startup, as a host that hangs would.
    const accepted: net.Socket[] = [];
    const silent = net.createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const server = new URL(serviceUrl('postgres'));
    const url =
      `${server.protocol}//${server.username}:${server.password}@127.0.0.1:${port},` +
      `${server.host}${server.pathname}${server.search}`;
    // The silent host first: the pool's first connection tries it first.
    const db = createDatabase({ url, maxConnections: 1, connectTimeoutSeconds: 1 });
    try {
      const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
      expect(row?.one).toBe(1);
      expect(accepted.length).toBeGreaterThan(0);
      expect(uncaught).toEqual([]);
    } finally {
      await db.close();
      accepted.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it('resolves a cancel once the server has taken it, and the query fails canceled', async () => {
    const db = createDatabase({
      url: serviceUrl('postgres'),
      maxConnections: 1,
      applicationName: 'cancel-taken',
    });
    try {
      const sleeping = db.sql`select pg_sleep(60)`;
      const outcome = sleeping.then(
        () => 'served',
        (err: unknown) => err,
      );
      for (;;) {
        const [row] = await admin.sql<{ running: number }[]>`
          select count(*)::int as running from pg_stat_activity
          where application_name = 'cancel-taken' and query like '%pg_sleep%' and state = 'active'
        `;
        if (row!.running > 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // What a caller waits for before its next statement on the connection, so that the
      // request cannot land on that one.
      const taken = sleeping.cancel();
      expect(taken).toBeInstanceOf(Promise);
      await taken;
      expect(await outcome).toMatchObject({ code: '57014' });
      const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
      expect(row?.one).toBe(1);
    } finally {
      await db.close();
    }
  });

  it('serves the next query on a connection after a COPY that came in whole before it was read', async () => {
    const db = createDatabase({
      url: serviceUrl('postgres'),
      maxConnections: 1,
      applicationName: 'copy-read-late',
    });
    try {
      for (let round = 0; round < 5; round++) {
        // 60 rows of 1 kB: past the 16 kB the COPY's stream buffers, so the driver pauses the
        // socket, and within one 64 kB socket read once the stream is read.
        const stream = await db.sql`
          copy (select repeat('x', 1000) from generate_series(1, 60)) to stdout`.readable();
        // Read only once the server has sent all of it (and the end of the query).
        for (;;) {
          const [row] = await admin.sql<{ idle: number }[]>`
            select count(*)::int as idle from pg_stat_activity
            where application_name = 'copy-read-late' and state = 'idle'
          `;
          if (row!.idle > 0) break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        let bytes = 0;
        for await (const chunk of stream) bytes += (chunk as Buffer).length;
        expect(bytes).toBe(60 * 1001);
        const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
        expect(row?.one).toBe(1);
      }
    } finally {
      await db.close();
    }
  });

  it('reports an error that comes with the start of a COPY to the stream reader, not the process', async () => {
    const db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    try {
      for (let round = 0; round < 20; round++) {
        // Fails on its first row, as the server has just sent CopyOutResponse.
        const stream = await db.sql
          .unsafe('copy (select 1 / (x - 1) from generate_series(1, 1) x) to stdout')
          .readable();
        const read = async (): Promise<void> => {
          for await (const chunk of stream) expect(chunk).toBeUndefined();
        };
        await expect(read()).rejects.toMatchObject({ code: '22012' });
        const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
        expect(row?.one).toBe(1);
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
