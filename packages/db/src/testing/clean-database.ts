import { randomBytes } from 'node:crypto';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database } from '../core/database.js';
import { createDatabase } from '../core/database.js';
import { migrate } from '../schema/migrate.js';
import { migrations } from '../schema/migrations.js';

/** The test servers: plain PostgreSQL, and PostgreSQL with TimescaleDB preloaded. */
export type TestServer = 'postgres' | 'timescale';

type CleanDatabase = { db: Database; dispose(): Promise<void> };

/** A fresh, empty database on the test server, not yet migrated; `dispose` drops it. */
export async function cleanDatabase(server: TestServer, prefix: string): Promise<CleanDatabase> {
  return await cloneDatabase(server, prefix, 'template0');
}

/**
 * A fresh database migrated with the default settings, cloned from a template that is migrated
 * once per server (and per set of migrations), so a suite does not pay for the migrations and
 * a TimescaleDB server does not build hypertables and aggregates once per suite.
 */
export async function migratedDatabase(server: TestServer, prefix: string): Promise<CleanDatabase> {
  return await cloneDatabase(server, prefix, await migratedTemplate(server));
}

async function cloneDatabase(
  server: TestServer,
  prefix: string,
  template: string,
): Promise<CleanDatabase> {
  const url = serviceUrl(server);
  const admin = createDatabase({ url, maxConnections: 1, applicationName: `${prefix}-test` });
  const name = `${prefix}_${server}_${randomBytes(4).toString('hex')}`;
  await admin.sql`create database ${admin.sql(name)} template ${admin.sql(template)}`;
  const testUrl = new URL(url);
  testUrl.pathname = `/${name}`;
  const db = createDatabase({ url: testUrl.toString(), maxConnections: 4 });
  return {
    db,
    async dispose() {
      await db.close();
      await admin.sql`drop database if exists ${admin.sql(name)} with (force)`;
      await admin.close();
    },
  };
}

/** Serializes the creation of templates among test processes sharing a server. */
const templateLockKey = 7_171_302_099;

/**
 * The name of the server's migrated template, created when missing. It takes no connections
 * once migrated: `create database … template` needs it idle, and TimescaleDB's launcher starts
 * no job scheduler in a database that takes no connections.
 */
async function migratedTemplate(server: TestServer): Promise<string> {
  const latest = migrations.at(-1)?.version ?? 0;
  const name = `monitor_template_v${latest}`;
  const url = serviceUrl(server);
  const admin = createDatabase({ url, maxConnections: 1, applicationName: 'template-test' });
  // One session: the advisory lock is a session lock, and `create database` refuses to run
  // inside a transaction.
  const sql = await admin.sql.reserve();
  try {
    await sql`select pg_advisory_lock(${templateLockKey})`;
    const [existing] = await sql<{ ready: boolean }[]>`
      select not datallowconn as ready from pg_database where datname = ${name}
    `;
    if (existing?.ready) return name;
    // A template left half made by a test process that died: made again.
    if (existing !== undefined) await sql`drop database ${sql(name)} with (force)`;
    await sql`create database ${sql(name)} template template0`;
    const templateUrl = new URL(url);
    templateUrl.pathname = `/${name}`;
    const template = createDatabase({ url: templateUrl.toString(), maxConnections: 2 });
    try {
      await migrate(template);
      // The clones start with the storage jobs paused: a refresh at a moment of the scheduler's
      // choosing would race the tests' own writes (samples written below a watermark stay out
      // of an aggregate until the next refresh). A test of the jobs applies policies of its own.
      const [timescale] = await template.sql`
        select 1 from pg_extension where extname = 'timescaledb'`;
      if (timescale !== undefined) {
        await template.sql`
          select alter_job(job_id, scheduled => false) from timescaledb_information.jobs
          where job_id >= 1000`; // the policies' jobs: TimescaleDB's own are numbered below
      }
    } finally {
      await template.close();
    }
    await sql`alter database ${sql(name)} with allow_connections false`;
    for (let attempt = 0; ; attempt++) {
      const [row] = await sql<{ sessions: number }[]>`
        select count(pg_terminate_backend(pid))::int as sessions
        from pg_stat_activity where datname = ${name}
      `;
      if (row?.sessions === 0) return name;
      if (attempt === 100) throw new Error(`the template ${name} still has sessions after 10 s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    await sql`select pg_advisory_unlock(${templateLockKey})`.catch(() => undefined);
    sql.release();
    await admin.close();
  }
}
