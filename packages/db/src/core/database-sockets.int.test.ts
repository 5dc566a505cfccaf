// @services postgres
import net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from './database.js';
import { serviceUrl } from '@monitor/testkit/vitest';

/**
 * What the driver (@monitor/postgres-driver, CHANGES.md) does with its sockets, seen from the
 * sockets themselves: each one the driver opens is recorded (`net.Socket`, which it constructs
 * at connect time, is replaced by a subclass for the test).
 */
describe("the database driver's sockets", () => {
  const OriginalSocket = net.Socket;
  let opened: net.Socket[] = [];

  beforeEach(() => {
    opened = [];
    class RecordedSocket extends OriginalSocket {
      constructor(options?: net.SocketConstructorOpts) {
        super(options);
        opened.push(this);
      }
    }
    net.Socket = RecordedSocket;
  });

  afterEach(() => {
    net.Socket = OriginalSocket;
  });

  it('opens each connection with Nagle off, so the small end of a COPY goes out at once', async () => {
    const db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 2 });
    try {
      await Promise.all([db.sql`select pg_sleep(0.05)`, db.sql`select pg_sleep(0.05)`]);
      expect(opened).toHaveLength(2);
      // Node keeps the option under this symbol and applies it to the handle on connect.
      for (const socket of opened) {
        const noDelay = Object.getOwnPropertySymbols(socket).find(
          (symbol) => symbol.description === 'kSetNoDelay',
        );
        expect(noDelay && (socket as unknown as Record<symbol, unknown>)[noDelay]).toBe(true);
      }
    } finally {
      await db.close();
    }
  });

  it('flushes the next connection after one closed with a small write pending', async () => {
    const db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    try {
      await db.sql`select 1`;
      expect(opened).toHaveLength(1);
      // From the check phase: the socket is destroyed, then a query is written, whose small
      // write is scheduled for the next check phase; the socket's close comes first, in this
      // loop turn's close phase, with the write still pending.
      const written = await new Promise<Promise<unknown>>((resolve) =>
        setImmediate(() => {
          opened[0]!.destroy();
          const query = db.sql`select 1`.then(
            () => 'served',
            (err: unknown) => err,
          );
          resolve(query);
        }),
      );
      expect(await written).toMatchObject({ code: 'CONNECTION_CLOSED' });
      // The connection opens again and its first writes go out (hung before).
      const [row] = await db.sql<{ two: number }[]>`select 2 as two`;
      expect(row?.two).toBe(2);
      expect(opened).toHaveLength(2);
    } finally {
      await db.close();
    }
  });

  it('joins a message split across socket reads from its own bytes, not the whole read', async () => {
    const db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    const concat = Buffer.concat;
    let joined = 0;
    try {
      await db.sql`select 1`;
      Buffer.concat = (list, totalLength) => {
        const out = concat(list, totalLength);
        joined += out.length;
        return out;
      };
      // 8 MB of 41-byte rows: nearly every 64 kB socket read ends inside one.
      const stream = await db.sql`
        copy (select repeat('x', 40) from generate_series(1, 200000)) to stdout`.readable();
      let read = 0;
      for await (const chunk of stream) read += (chunk as Buffer).length;
      Buffer.concat = concat;
      expect(read).toBe(200_000 * 41);
      // Copying each read again to join one row was as many bytes again as the COPY itself.
      expect(joined).toBeLessThan(read / 20);
    } finally {
      Buffer.concat = concat;
      await db.close();
    }
  });
});
