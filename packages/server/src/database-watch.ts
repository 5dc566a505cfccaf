import { Counter, Gauge } from 'prom-client';
import type { Database } from '@monitor/db';
import type { RoleContext } from './role-context.js';

/** How often a role asks its database which server answers (a trivial query). */
const probeIntervalMs = 2_000;

/**
 * What the probes of one pool add up to: the server that answered changed (a promotion: the
 * pool now writes to another host), and how long no server answered. Fed probe results with
 * their times; counts from the first failed probe to the first good one.
 */
export function createDatabaseWatch(report: {
  primaryChanged: () => void;
  unavailableFor: (seconds: number) => void;
}): { succeeded(server: string, atMs: number): void; failed(atMs: number): void } {
  let lastServer: string | undefined;
  let countedUpToMs: number | undefined;
  return {
    succeeded(server, atMs) {
      if (countedUpToMs !== undefined) report.unavailableFor((atMs - countedUpToMs) / 1000);
      countedUpToMs = undefined;
      if (lastServer !== undefined && server !== lastServer) report.primaryChanged();
      lastServer = server;
    },
    failed(atMs) {
      // Counted as it goes, so the counter grows during an outage, not only after it.
      if (countedUpToMs !== undefined) report.unavailableFor((atMs - countedUpToMs) / 1000);
      countedUpToMs = atMs;
    },
  };
}

/**
 * Exports `monitor_database_primary_changes_total`, `monitor_database_unavailable_seconds_total`
 * and `monitor_database_up` (the last probe answered; the role is a default label) from a probe
 * of `db` at once and then every two seconds, until shutdown.
 */
export function watchDatabase(ctx: RoleContext, db: Database): void {
  const primaryChanges = new Counter({
    name: 'monitor_database_primary_changes_total',
    help: 'Times the server answering this process changed (a promotion, or a move to another host).',
    registers: [ctx.metrics.registry],
  });
  const unavailableSeconds = new Counter({
    name: 'monitor_database_unavailable_seconds_total',
    help: 'Seconds during which no database server answered this process.',
    registers: [ctx.metrics.registry],
  });
  const up = new Gauge({
    name: 'monitor_database_up',
    help: 'Whether the last probe of the database (every 2 s) was answered.',
    registers: [ctx.metrics.registry],
  });
  const watch = createDatabaseWatch({
    primaryChanged: () => primaryChanges.inc(),
    unavailableFor: (seconds) => unavailableSeconds.inc(seconds),
  });
  let probing = false;
  const probe = (): void => {
    if (probing) return;
    probing = true;
    db.sql<{ server: string }[]>`
      select coalesce(host(inet_server_addr()), 'local') || ':' || inet_server_port() as server`
      .then(
        ([row]) => {
          up.set(1);
          watch.succeeded(row?.server ?? 'unknown', Date.now());
        },
        () => {
          up.set(0);
          watch.failed(Date.now());
        },
      )
      .finally(() => {
        probing = false;
      });
  };
  probe();
  const timer = setInterval(probe, probeIntervalMs);
  timer.unref();
  ctx.shutdown.onShutdown('database watch', () => {
    clearInterval(timer);
    return Promise.resolve();
  });
}
