import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReplicatedPostgres } from '@monitor/testkit';
import { startReplicatedPostgres } from '@monitor/testkit';
import { classifyDbError } from './classify-db-error.js';
import type { Database } from './database.js';
import { createDatabase } from './database.js';

/**
 * A pool given both hosts of a primary and its synchronous standby, asking for the read-write
 * one (issue 42): after the primary is killed and the standby promoted, the same pool writes to
 * the new primary without being made again, and every write it acknowledged before is there.
 * TimescaleDB on both, as deployed: physical replication carries hypertables and compressed
 * chunks with the rest. While no host is writable, a query fails at once, retriable, rather
 * than waiting for one; a pool asking for a standby reads from it, and from the primary when
 * none is left.
 */
describe('a pool over a primary and its synchronous standby', () => {
  let pair: ReplicatedPostgres;
  let db: Database;
  let reads: Database;

  beforeAll(async () => {
    pair = await startReplicatedPostgres({ timescale: true });
    db = createDatabase({ url: pair.url, maxConnections: 4, connectTimeoutSeconds: 2 });
    // The primary listed first: a standby is preferred wherever it is in the list.
    reads = createDatabase({
      url: pair.url.replace('read-write', 'prefer-standby'),
      maxConnections: 4,
      connectTimeoutSeconds: 2,
    });
  }, 120_000);

  afterAll(async () => {
    await reads?.close({ timeoutSeconds: 1 });
    await db?.close({ timeoutSeconds: 1 });
    await pair?.stop();
  });

  it('writes to the promoted standby after the primary dies, nothing acknowledged lost', async () => {
    await db.sql`create table acknowledged (id int not null, at timestamptz not null, primary key (id, at))`;
    await db.sql`select create_hypertable('acknowledged', 'at', chunk_time_interval => interval '1 hour')`;
    await db.sql`alter table acknowledged set (timescaledb.compress)`;
    const acknowledged: number[] = [];
    const hourAgo = Date.now() - 3 * 3_600_000;
    for (let id = 0; id < 200; id++) {
      // Half of them an hour-old chunk that is then compressed.
      const at = new Date(id < 100 ? hourAgo + id : Date.now() + id);
      await db.sql`insert into acknowledged values (${id}, ${at})`;
      acknowledged.push(id);
    }
    const [compressed] = await db.sql<{ n: number }[]>`
      select count(compress_chunk(c))::int as n
      from show_chunks('acknowledged', older_than => interval '2 hours') c`;
    expect(compressed?.n).toBe(1);
    // Every connection of the pool is on the primary: the hosts are tried from different
    // starts, and a standby (which reports default_transaction_read_only off) is passed over.
    const before = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          db.sql<{ recovery: boolean }[]>`select pg_is_in_recovery() as recovery, pg_sleep(0.05)`,
      ),
    );
    expect(before.map(([row]) => row?.recovery)).toEqual(Array(8).fill(false));
    const standbyReads = await Promise.all(
      Array.from(
        { length: 8 },
        () =>
          reads.sql<
            { recovery: boolean }[]
          >`select pg_is_in_recovery() as recovery, pg_sleep(0.05)`,
      ),
    );
    expect(standbyReads.map(([row]) => row?.recovery)).toEqual(Array(8).fill(true));

    // A pool given only the standby, asking for read-write: the query fails, retriable, and
    // says why.
    const standbyOnly = createDatabase({
      url: `${pair.standby.url}?target_session_attrs=read-write`,
      maxConnections: 1,
      connectTimeoutSeconds: 2,
    });
    const refused = await standbyOnly.sql`select 1`.then(
      () => undefined,
      (err: unknown) => err,
    );
    await standbyOnly.close({ timeoutSeconds: 1 });
    expect(refused).toMatchObject({
      message: expect.stringContaining('is read-write (target_session_attrs)'),
    });
    expect(classifyDbError(refused)).toBe('transient');

    await pair.primary.kill();
    // No host is writable until the promotion: each query tries both, then fails, retriable
    // (an API answers 503), instead of waiting for a primary that may never come.
    for (let attempt = 0; attempt < 8; attempt++) {
      const failed = await db.sql`select 1`.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(failed).toBeInstanceOf(Error);
      expect(classifyDbError(failed)).toBe('transient');
    }
    await pair.standby.promote();

    // The pool's connections to the dead primary fail; new ones find the promoted standby.
    let id = 200;
    let failures = 0;
    while (acknowledged.length < 300) {
      try {
        await db.sql`insert into acknowledged values (${id}, ${new Date()})`;
        acknowledged.push(id);
        id += 1;
      } catch (err) {
        failures += 1;
        // Bounded: a pool that never finds the new primary fails the test, it does not hang.
        expect(failures, String(err)).toBeLessThan(50);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    const rows = await db.sql<{ id: number }[]>`select id from acknowledged order by id`;
    expect(rows.map((row) => row.id)).toEqual(acknowledged);
    const [after] = await db.sql<{ recovery: boolean; port: number }[]>`
      select pg_is_in_recovery() as recovery, inet_server_port() as port`;
    expect(after).toEqual({ recovery: false, port: pair.standby.port });
    // No standby left: reads go to the primary, on the connections opened to the standby
    // before its promotion and on a new pool's (which asks for a standby first).
    const [read] = await reads.sql<{ recovery: boolean; port: number }[]>`
      select pg_is_in_recovery() as recovery, inet_server_port() as port`;
    expect(read).toEqual({ recovery: false, port: pair.standby.port });
    const newReads = createDatabase({
      url: pair.url.replace('read-write', 'prefer-standby'),
      maxConnections: 1,
      connectTimeoutSeconds: 2,
    });
    const newRead = await newReads.sql<{ recovery: boolean; port: number }[]>`
      select pg_is_in_recovery() as recovery, inet_server_port() as port`.finally(() =>
      newReads.close({ timeoutSeconds: 1 }),
    );
    expect(newRead[0]).toEqual({ recovery: false, port: pair.standby.port });
    // The compressed chunk came across as it was, and reads back.
    const [chunks] = await db.sql<{ compressed: number }[]>`
      select count(*)::int as compressed from timescaledb_information.chunks
      where hypertable_name = 'acknowledged' and is_compressed`;
    expect(chunks?.compressed).toBe(1);
  }, 120_000);
});
