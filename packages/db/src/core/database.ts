import postgres from '@monitor/postgres-driver';
import type { ServerCapabilities } from '../storage/server-capabilities.js';
import { probeServerCapabilities } from '../storage/server-capabilities.js';

/** The postgres.js query function of a pool. Only this package builds SQL with it. */
export type Sql = postgres.Sql;

/** A postgres.js query function bound to one open transaction. */
export type TransactionSql = postgres.TransactionSql;

/** Either of the above: what a helper needs that runs inside or outside a transaction. */
export type Queryable = postgres.ISql;

export type DatabaseOptions = {
  /** `postgres://user:pass@host:port/db?sslmode=…` */
  url: string;
  /** Pool size. */
  maxConnections: number;
  /** Shown in `pg_stat_activity`, e.g. `monitor-writer`. */
  applicationName?: string;
  /** Gives up on a connection attempt after this long (default 10 s). */
  connectTimeoutSeconds?: number;
  /** Closes connections idle for this long (default: never). */
  idleTimeoutSeconds?: number;
};

export type Database = {
  /** The pool. Column names stay snake_case: repositories map rows explicitly. */
  readonly sql: Sql;
  /** Resolves when the server answers a trivial query (readiness); rejects otherwise. */
  ping(): Promise<void>;
  /**
   * What the server can do for storage (TimescaleDB, its job scheduler), asked on the first
   * call and kept for the pool's life; asked again after a failed probe.
   */
  capabilities(): Promise<ServerCapabilities>;
  /** Ends the pool gracefully: running queries get `timeoutSeconds` (default 5) to finish. */
  close(options?: { timeoutSeconds?: number }): Promise<void>;
};

const defaultConnectTimeoutSeconds = 10;

/**
 * The longest wait, in seconds, before a connection of the pool tries its server(s) again after
 * failed attempts. postgres.js's default grows to 20 s after seven failures: a pool that failed
 * throughout a failover (a promotion takes about 10 s) then waited up to 20 s more before it
 * found the new primary. At 1 s a query could still wait a second after the new primary
 * accepted writes before its connection tried again, where storage should resume within one
 * (issue 60). Retries happen only for a waiting query, so a quicker one costs a refused
 * connect (or a standby's refusal to be the primary) at most four times a second per connection.
 */
const maxReconnectDelaySeconds = 0.25;

/** postgres.js's backoff (3^n / 100 s, jittered), capped at `maxReconnectDelaySeconds`. */
function reconnectDelaySeconds(failures: number): number {
  return (0.5 + Math.random() / 2) * Math.min(3 ** failures / 100, maxReconnectDelaySeconds);
}
const defaultCloseTimeoutSeconds = 5;

/**
 * A connection pool, over the driver of @monitor/postgres-driver (postgres.js with the changes its
 * CHANGES.md lists): over several hosts each is tried once per query that opens a connection,
 * `target_session_attrs=read-write` passes over a hot standby, and sockets have Nagle off.
 */
export function createDatabase(options: DatabaseOptions): Database {
  const connectTimeoutSeconds = options.connectTimeoutSeconds ?? defaultConnectTimeoutSeconds;
  const postgresOptions: Partial<postgres.Options<Record<string, postgres.PostgresType>>> = {
    max: options.maxConnections,
    prepare: true,
    connect_timeout: connectTimeoutSeconds,
    backoff: reconnectDelaySeconds,
    // TimescaleDB's DDL raises notices (e.g. on adding a policy); our SQL raises none that
    // anyone needs to read at run time.
    onnotice: () => undefined,
    connection: { application_name: options.applicationName ?? 'monitor' },
    ...(options.idleTimeoutSeconds === undefined
      ? {}
      : { idle_timeout: options.idleTimeoutSeconds }),
  };
  const sql = postgres(options.url, postgresOptions);

  let capabilities: Promise<ServerCapabilities> | undefined;
  return {
    sql,
    async ping() {
      await sql`select 1`;
    },
    capabilities() {
      capabilities ??= probeServerCapabilities(sql).catch((err: unknown) => {
        capabilities = undefined;
        throw err;
      });
      return capabilities;
    },
    async close(closeOptions) {
      await sql.end({ timeout: closeOptions?.timeoutSeconds ?? defaultCloseTimeoutSeconds });
    },
  };
}
