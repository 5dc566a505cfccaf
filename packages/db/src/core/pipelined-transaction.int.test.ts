// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RestartablePostgres } from '@monitor/testkit';
import { startRestartablePostgres } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database } from './database.js';
import { createDatabase } from './database.js';
import { isTransientDbError } from './classify-db-error.js';
import { pipelinedTransaction } from './pipelined-transaction.js';

describe('pipelinedTransaction', () => {
  let admin: Database;
  // One connection: a transaction left open, or a dead connection handed back, fails the next.
  let db: Database;
  const table = `pipelined_${randomBytes(6).toString('hex')}`;
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown): void => {
    uncaught.push(err);
  };

  beforeAll(async () => {
    admin = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    db = createDatabase({
      url: serviceUrl('postgres'),
      maxConnections: 1,
      applicationName: table,
    });
    await admin.sql`create table ${admin.sql(table)} (k text primary key)`;
    process.on('uncaughtException', onUncaught);
  });

  afterAll(async () => {
    process.off('uncaughtException', onUncaught);
    if (admin !== undefined) await admin.sql`drop table if exists ${admin.sql(table)}`;
    await db?.close();
    await admin?.close();
  });

  const keys = async (): Promise<string[]> =>
    (await admin.sql<{ k: string }[]>`select k from ${admin.sql(table)} order by k`).map(
      (row) => row.k,
    );
  const clear = async (): Promise<void> => {
    await admin.sql`truncate ${admin.sql(table)}`;
  };

  it('commits the first, middle and last statements together, and returns the result', async () => {
    await clear();
    const result = await pipelinedTransaction(db.sql, async (tx, begun) => {
      const [, [first]] = await Promise.all([
        begun,
        tx<{ k: string }[]>`insert into ${tx(table)} values ('a') returning k`,
      ]);
      await tx`insert into ${tx(table)} values ('b')`;
      // Not committed yet: another connection sees nothing.
      expect(await keys()).toEqual([]);
      return {
        result: first?.k,
        last: [
          tx`insert into ${tx(table)} values ('c')`,
          tx`insert into ${tx(table)} values ('d')`,
        ],
      };
    });
    expect(result).toBe('a');
    expect(await keys()).toEqual(['a', 'b', 'c', 'd']);
  });

  it('rolls everything back and throws the first failure when a last statement fails', async () => {
    await clear();
    await admin.sql`insert into ${admin.sql(table)} values ('taken')`;
    const attempt = pipelinedTransaction(db.sql, async (tx, begun) => {
      await Promise.all([begun, tx`insert into ${tx(table)} values ('a')`]);
      return {
        result: 'done',
        last: [
          tx`insert into ${tx(table)} values ('b')`,
          tx`insert into ${tx(table)} values ('taken')`,
          // Only finds the transaction failed (25P02): not the error thrown.
          tx`insert into ${tx(table)} values ('c')`,
        ],
      };
    });
    await expect(attempt).rejects.toMatchObject({ code: '23505' });
    expect(await keys()).toEqual(['taken']);
    // The connection came back outside any transaction: this commits on its own.
    await db.sql`insert into ${db.sql(table)} values ('after')`;
    expect(await keys()).toEqual(['after', 'taken']);
  });

  it('rolls back what the body sent when it throws', async () => {
    await clear();
    const attempt = pipelinedTransaction(db.sql, async (tx, begun) => {
      await Promise.all([begun, tx`insert into ${tx(table)} values ('a')`]);
      throw new Error('the body gave up');
    });
    await expect(attempt).rejects.toThrow('the body gave up');
    await db.sql`insert into ${db.sql(table)} values ('after')`;
    expect(await keys()).toEqual(['after']);
  });

  it('throws when a statement failed and the body caught its error', async () => {
    await clear();
    await admin.sql`insert into ${admin.sql(table)} values ('taken')`;
    const attempt = pipelinedTransaction(db.sql, async (tx, begun) => {
      await Promise.all([begun, tx`insert into ${tx(table)} values ('a')`]);
      await tx`insert into ${tx(table)} values ('taken')`.catch(() => undefined);
      return { result: 'done', last: [] };
    });
    await expect(attempt).rejects.toThrow('answered its COMMIT with ROLLBACK');
    expect(await keys()).toEqual(['taken']);
  });

  it('fails when its connection is killed, and the pool then serves on a new one', async () => {
    await clear();
    // Each round kills the connection as inserts that have not been prepared go out: the
    // statements queued behind one waited forever, and a dead connection went back to the pool.
    for (let round = 0; round < 20; round++) {
      const attempt = pipelinedTransaction(db.sql, async (tx, begun) => {
        const [, [me]] = await Promise.all([
          begun,
          tx<{ pid: number }[]>`select pg_backend_pid() as pid`,
        ]);
        await admin.sql`select pg_terminate_backend(${me!.pid})`;
        // Two at once: the second waits behind the first, which describes its parameters first.
        await Promise.all([
          tx`insert into ${tx(table)} values (${`killed-${round}`})`,
          tx`insert into ${tx(table)} values (${`queued-${round}`})`,
        ]);
        return { result: 'done', last: [tx`insert into ${tx(table)} values ('last')`] };
      });
      // A connection error (which one depends on what the socket saw first): retried later.
      const failure = await attempt.then(
        () => undefined,
        (err: unknown) => err,
      );
      expect(isTransientDbError(failure)).toBe(true);
      // Handed back dead, the pool's only connection failed every later query or hung.
      const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
      expect(row?.one).toBe(1);
    }
    expect(await keys()).toEqual([]);
    expect(uncaught).toEqual([]);
  });
});

describe('pipelinedTransaction while the server is down and after it is back', () => {
  let server: RestartablePostgres;

  beforeAll(async () => {
    server = await startRestartablePostgres();
  });

  afterAll(async () => {
    await server?.destroy();
  });

  it('refuses each of twenty transactions while down, then serves more at once than the pool holds', async () => {
    const db = createDatabase({ url: server.url, maxConnections: 2, connectTimeoutSeconds: 5 });
    const selectOne = () =>
      pipelinedTransaction(db.sql, async (tx, begun) => {
        const [, [row]] = await Promise.all([begun, tx<{ one: number }[]>`select 1 as one`]);
        return { result: row?.one, last: [] };
      });
    try {
      expect(await selectOne()).toBe(1);
      await server.stop();
      // A reservation refused while down stayed queued: each cost another connect attempt (with
      // backoff) ahead of the next one, until one waited for good; and once the server was back
      // the connection handed to a stale one went to nobody.
      for (let attempt = 0; attempt < 20; attempt++) {
        const refused = await selectOne().then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(isTransientDbError(refused)).toBe(true);
      }
      await server.start();
      expect(await Promise.all(Array.from({ length: 6 }, selectOne))).toEqual(Array(6).fill(1));
    } finally {
      await db.close();
    }
    // About two minutes: postgres.js waits up to 20 s between connect attempts once many failed.
  }, 300_000);
});
