// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database, TransactionSql } from './database.js';
import { createDatabase } from './database.js';
import { isTransientDbError } from './classify-db-error.js';
import { transactionCommittingLast } from './transaction-committing-last.js';

describe('transactionCommittingLast', () => {
  let admin: Database;
  // One connection: a transaction left open, or a dead connection handed back, fails the next.
  let db: Database;
  const table = `committing_last_${randomBytes(6).toString('hex')}`;
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown): void => {
    unhandled.push(err);
  };

  beforeAll(async () => {
    admin = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    db = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    await admin.sql`create table ${admin.sql(table)} (k text primary key)`;
    process.on('unhandledRejection', onUnhandled);
  });

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
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
  /** An async helper of one statement, as the stores pass them. */
  const insert = async (tx: TransactionSql, k: string): Promise<void> => {
    await tx`insert into ${tx(table)} values (${k})`;
  };

  it('commits the body and its last statements together, and returns the result', async () => {
    await clear();
    const result = await transactionCommittingLast(db.sql, async (tx) => {
      const [first] = await tx<{ k: string }[]>`insert into ${tx(table)} values ('a') returning k`;
      // Not committed yet: another connection sees nothing.
      expect(await keys()).toEqual([]);
      return {
        result: first?.k,
        last: [insert(tx, 'b'), tx`insert into ${tx(table)} values ('c')`],
      };
    });
    expect(result).toBe('a');
    expect(await keys()).toEqual(['a', 'b', 'c']);
  });

  it('rolls everything back and throws the first failure when a last statement fails', async () => {
    await clear();
    await admin.sql`insert into ${admin.sql(table)} values ('taken')`;
    const attempt = transactionCommittingLast(db.sql, async (tx) => {
      await insert(tx, 'a');
      return {
        result: 'done',
        // The second fails; the third only finds the transaction failed (25P02): not the
        // error thrown.
        last: [insert(tx, 'b'), insert(tx, 'taken'), insert(tx, 'c')],
      };
    });
    await expect(attempt).rejects.toMatchObject({ code: '23505' });
    expect(await keys()).toEqual(['taken']);
    // The connection came back outside any transaction: this commits on its own.
    await db.sql`insert into ${db.sql(table)} values ('after')`;
    expect(await keys()).toEqual(['after', 'taken']);
    expect(unhandled).toEqual([]);
  });

  it('rolls back what the body sent when it throws', async () => {
    await clear();
    const attempt = transactionCommittingLast(db.sql, async (tx) => {
      await insert(tx, 'a');
      throw new Error('the body gave up');
    });
    await expect(attempt).rejects.toThrow('the body gave up');
    await db.sql`insert into ${db.sql(table)} values ('after')`;
    expect(await keys()).toEqual(['after']);
  });

  it('fails when its connection dies under its last statements, and the pool serves on', async () => {
    await clear();
    for (let round = 0; round < 10; round++) {
      let killed: Promise<unknown> = Promise.resolve();
      const attempt = transactionCommittingLast(db.sql, async (tx) => {
        const [me] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
        await insert(tx, `first-${round}`);
        // Killed while the last statements run: the COMMIT behind them never gets an answer.
        killed = admin.sql`
          select pg_terminate_backend(pid) from pg_stat_activity
          where pid = ${me!.pid} and pg_sleep(0.05) is not null
        `.execute();
        return {
          result: 'done',
          last: [insert(tx, `last-${round}`), tx`select pg_sleep(0.5)`, insert(tx, 'other')],
        };
      });
      const failure = await attempt.then(
        () => undefined,
        (err: unknown) => err,
      );
      await killed;
      expect(isTransientDbError(failure)).toBe(true);
      const [row] = await db.sql<{ one: number }[]>`select 1 as one`;
      expect(row?.one).toBe(1);
    }
    expect(await keys()).toEqual([]);
    expect(unhandled).toEqual([]);
  });
});
