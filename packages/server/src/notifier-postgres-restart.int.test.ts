import { afterAll, describe, expect, it } from 'vitest';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import {
  createDatabase,
  createNotificationChannelStore,
  createOrgStore,
  fireAlert,
} from '@monitor/db';
import { newId } from '@monitor/platform';
import type { HttpReceiver, RestartablePostgres, RunningAlertmanager } from '@monitor/testkit';
import { startAlertmanager, startHttpReceiver, startRestartablePostgres } from '@monitor/testkit';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';

/**
 * The notifier role survives PostgreSQL stopping while its pool opens a connection. postgres.js
 * runs a query of its own on every new connection (the array types, `fetch_types`) and left its
 * failure unhandled: a server stopping in that moment reset the connection, or closed it and then
 * refused the retry, and that error killed the process (the chaos suite saw `connect
 * ECONNREFUSED`). The moment is made certain here, not waited for: the catalog that query reads
 * is locked while the notifier's connections are dropped, so its next one waits in that query.
 */

const timeoutMs = 60_000;
const ruleName = 'notifier survives postgres';

type ListedAlert = { labels: Record<string, string>; updatedAt: string };

let postgres: RestartablePostgres | undefined;
let receiver: HttpReceiver | undefined;
let alertmanager: RunningAlertmanager | undefined;
let stack: MonitorStack | undefined;

afterAll(async () => {
  // The stack drops its database: the server must be up for that.
  await postgres?.start();
  await stack?.stop();
  await alertmanager?.stop();
  await receiver?.close();
  await postgres?.destroy();
});

describe('the notifier role when PostgreSQL stops', () => {
  it('keeps running when the server stops as a connection is being opened, and delivers and re-sends once it is back', async () => {
    const server = await startRestartablePostgres();
    postgres = server;
    receiver = await startHttpReceiver();
    alertmanager = await startAlertmanager({ webhookUrl: receiver.url });
    const am = alertmanager;
    stack = await createMonitorStack(
      'notifier_pg_restart',
      // Re-sends every second, so one runs beside the outbox rounds while the server is away.
      { NOTIFIER_ALERTMANAGER_RESEND_MS: '1000', DATABASE_POOL_MAX: '2' },
      { bus: 'in-process', postgresUrl: server.url },
    );
    const { db } = stack;
    const orgId = (await createOrgStore(db).createOrganization('acme')).id;
    await createNotificationChannelStore(db).putChannel(orgId, 'alertmanager', {
      urls: [am.url],
      timeout_seconds: 5,
    });
    const ruleId = newId('rul');
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels)
      values (${ruleId}, ${orgId}, ${ruleName}, 'disk_used_percent', 'greater_than', 90, 0,
        'critical', array['alertmanager'])
    `;
    const fire = async (host: string): Promise<void> => {
      const firedAt = new Date();
      const result = await db.sql.begin((tx) =>
        fireAlert(tx, { orgId, ruleId, host, value: 97, startedAt: firedAt, firedAt }),
      );
      if (result.outcome !== 'fired') throw new Error(`fireAlert: ${result.outcome}`);
    };
    const alertmanagerApi = createApiCall({ baseUrl: am.url });
    const listed = async (): Promise<ListedAlert[]> =>
      (
        await alertmanagerApi<ListedAlert[]>(
          `/api/v2/alerts?filter=${encodeURIComponent(`alertname="${ruleName}"`)}`,
        )
      ).body;

    await fire('before-1');
    const notifier = await stack.start('notifier');
    /** Waits for `probe`, failing at once with the notifier's output if the process ended. */
    const whileRunning = <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> =>
      waitFor(
        async () => {
          assertRunning(notifier, what);
          return probe();
        },
        timeoutMs,
        what,
      );
    await whileRunning('the first alert in Alertmanager', async () =>
      (await listed()).some((alert) => alert.labels['host'] === 'before-1') ? true : undefined,
    );

    const locker = createDatabase({ url: stack.env['DATABASE_URL']!, maxConnections: 1 });
    const stoppedAtOutput = await (async () => {
      const lock = await locker.sql.reserve();
      try {
        await lock`begin`;
        await lock`lock table pg_catalog.pg_type in access exclusive mode`;
        await lock`
          select pg_terminate_backend(pid) from pg_stat_activity
          where application_name = 'monitor-notifier'
        `;
        // Queried on the locking session: it holds the lock, so its own lookups never wait. A
        // transaction sees one snapshot of the activity unless told to take a new one.
        await whileRunning(
          'a new notifier connection waiting in its array-types query',
          async () => {
            await lock`select pg_stat_clear_snapshot()`;
            const [row] = await lock<{ waiting: number }[]>`
              select count(*)::int as waiting from pg_stat_activity
              where application_name = 'monitor-notifier' and wait_event_type = 'Lock'
                and query like '%pg_catalog.pg_type%'
            `;
            return row!.waiting > 0 ? true : undefined;
          },
        );
        const at = notifier.output().length;
        await server.stop();
        return at;
      } finally {
        lock.release();
        await locker.close({ timeoutSeconds: 0 }).catch(() => undefined);
      }
    })();

    // The connection retries until the stopped server refuses it; its rounds then fail, logged.
    await waitFor(
      () =>
        Promise.resolve(
          notifier.ended() !== undefined ||
            notifier.output().slice(stoppedAtOutput).includes('ECONNREFUSED')
            ? true
            : undefined,
        ),
      timeoutMs,
      'the notifier to be refused by the stopped server',
    );
    assertRunning(notifier, 'PostgreSQL was stopped');

    await server.start();
    const backAt = Date.now();
    await fire('after-1');
    await whileRunning('the alert fired after the restart in Alertmanager', async () =>
      (await listed()).some((alert) => alert.labels['host'] === 'after-1') ? true : undefined,
    );
    await whileRunning('a re-send of the alert of before the restart', async () =>
      (await listed()).some(
        (alert) => alert.labels['host'] === 'before-1' && Date.parse(alert.updatedAt) > backAt,
      )
        ? true
        : undefined,
    );
    expect(notifier.ended(), 'the notifier exited on its own').toBeUndefined();
  }, 180_000);
});

function assertRunning(proc: RoleProcess, during: string): void {
  const ended = proc.ended();
  if (ended === undefined) return;
  const tail = proc.output().trimEnd().split('\n').slice(-20).join('\n');
  throw new Error(`the notifier exited (${ended}) while ${during}:\n${tail}`);
}
