// @services kafka
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAlertRuleDraft, createApiCall, waitFor } from '@monitor/testkit/builders';
import type { Database } from '@monitor/db';
import { createDatabase, createRuleStore, defaultOrganizationId } from '@monitor/db';
import type { HttpReceiver, PatroniCluster } from '@monitor/testkit';
import {
  createTestDatabase,
  receiverNetwork,
  startHttpReceiver,
  startPatroniCluster,
} from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import type { RoleProcess } from './testing/role-process.js';
import { runCommand, startRoleProcess } from './testing/role-process.js';
import { evaluatorRulesLoaded } from './testing/monitor-stack.js';

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const roleNames = ['gateway', 'writer', 'evaluator', 'api', 'notifier'] as const;

/**
 * The database's primary node dies under ingest, in Kafka mode (issue 42, item 3): Patroni
 * promotes its synchronous standby once the leader's key expires, and the roles, given both
 * hosts, carry on against the new primary without a restart. Every sample a gateway
 * acknowledged is stored once, before and after; an alert whose window the kill interrupted
 * fires once, at the end of that window; each breach of a rule without a window, one of them
 * sent while no primary answered, fires one alert, delivered once to a webhook by the notifier;
 * the API answers 200 or 503 with Retry-After throughout, never 500; every role counts the change
 * of primary and the time without one.
 */
describe('a primary killed under load, Patroni promoting its synchronous standby', () => {
  let cluster: PatroniCluster;
  let db: Database;
  let webhook: HttpReceiver;
  const roles: RoleProcess[] = [];
  let env: Record<string, string>;

  beforeAll(async () => {
    cluster = await startPatroniCluster({ timescale: true });
    const primary = await cluster.leader();
    const database = await createTestDatabase(primary.url, 'db_failover');
    const bothHosts = cluster.url.replace('/postgres?', `${new URL(database.url).pathname}?`);
    env = {
      DATABASE_URL: bothHosts,
      KAFKA_BROKERS: serviceUrl('kafka'),
      SAMPLES_TOPIC: `samples-${randomBytes(4).toString('hex')}`,
      SAMPLES_TOPIC_PARTITIONS: '3',
      WRITER_BATCH_MAX_WAIT_MS: '20',
      EVALUATOR_RULE_POLL_MS: '200',
      NOTIFIER_POLL_MS: '100',
      NOTIFIER_ALLOWED_TARGET_NETWORKS: receiverNetwork,
      MONITOR_BOOTSTRAP_API_KEY: key,
    };
    await runCommand(['migrate'], env);
    db = createDatabase({ url: bothHosts, maxConnections: 2, connectTimeoutSeconds: 2 });
    webhook = await startHttpReceiver();
    for (const role of roleNames) {
      roles.push(await startRoleProcess(role, env));
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(roles.map((role) => role.stop()));
    await webhook?.close();
    await db?.close({ timeoutSeconds: 1 });
    await cluster?.stop();
  });

  it('stores every acknowledged sample once, fires and delivers each alert once, and answers 503 meanwhile, never 500', async () => {
    const [gateway, , evaluator, api] = roles as [
      RoleProcess,
      RoleProcess,
      RoleProcess,
      RoleProcess,
    ];
    const put = await createApiCall({ baseUrl: api.baseUrl, key })(
      '/api/v1/notification-channels/webhook',
      { method: 'PUT', body: { url: webhook.url, secret: 'whsec-failover-0123456789' } },
    );
    expect(put.status).toBe(200);
    // Fires after two minutes of breaching samples: the kill falls inside the window.
    await createRuleStore(db).createRule(
      defaultOrganizationId,
      buildAlertRuleDraft({ durationMinutes: 2, severity: 'warning', channels: ['webhook'] }),
    );
    // Fires on each breaching sample: one alert per breach, whichever primary stores it.
    await createRuleStore(db).createRule(
      defaultOrganizationId,
      buildAlertRuleDraft({
        name: 'memory high',
        metric: 'mem_percent',
        severity: 'warning',
        channels: ['webhook'],
      }),
    );
    await evaluatorRulesLoaded(evaluator.baseUrl, 2, 20_000);

    const t0 = Date.now() - 10 * 60_000;
    const acknowledged = new Set<number>();
    let sent = 0;
    /** One sample every 10 s of sample time for host `load-1`, breaching from the start. */
    const send = async (): Promise<void> => {
      const timeMs = t0 + sent * 10_000;
      sent += 1;
      const answer = await postIngest(
        gateway.baseUrl,
        { host: 'load-1', timestamp: new Date(timeMs).toISOString(), metrics: { cpu_percent: 95 } },
        { key },
      ).catch(() => undefined);
      if (answer?.status === 200) acknowledged.add(timeMs);
    };
    /** A `mem_percent` sample of host `load-2`, sent again until acknowledged (bounded). */
    const breaches: number[] = [];
    const flip = async (timeMs: number, memPercent: number): Promise<void> => {
      for (let attempt = 0; ; attempt++) {
        const answer = await postIngest(
          gateway.baseUrl,
          {
            host: 'load-2',
            timestamp: new Date(timeMs).toISOString(),
            metrics: { mem_percent: memPercent },
          },
          { key },
        ).catch(() => undefined);
        if (answer?.status === 200) break;
        expect(attempt, `load-2 sample at ${timeMs} not acknowledged`).toBeLessThan(60);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      if (memPercent > 90) breaches.push(timeMs);
    };
    // Six samples (50 s of sample time) before the kill: the window is pending, not firing.
    while (sent < 6) await send();
    expect(acknowledged.size).toBe(6);
    await flip(t0, 50);

    // Every role has seen the first primary (a process that never did sees no change).
    for (const role of roles) {
      await waitFor(
        async () => (/^monitor_database_up\S* 1$/m.test(await metricsOf(role)) ? true : undefined),
        10_000,
        'every role to see its database',
      );
    }
    const killed = await cluster.leader();
    await cluster.kill(killed);
    // The API is asked, all along, for what only the primary has, until a standby is promoted.
    const promoted = cluster.leader({ not: killed, timeoutMs: 60_000 });
    const apiAnswers = pollUntil(`${api.baseUrl}/api/v1/alerts?limit=1`, key, promoted);
    // Ingest goes on while no primary answers: the gateway needs Kafka (and its key cache).
    for (let i = 0; i < 3; i++) await send();
    // A breach while no primary answers: its alert fires once one does.
    await flip(t0 + 10_000, 95);
    await promoted;
    // 503 while no primary answered (not one request waiting for the promotion), then 200.
    const answers = await apiAnswers;
    expect(answers.filter((answer) => answer.status === 503).length).toBeGreaterThan(0);
    for (const answer of answers) {
      expect(answer, JSON.stringify(answer)).toSatisfy(
        ({ status, retryAfter }: ApiAnswer) =>
          status === 200 || (status === 503 && Number(retryAfter) >= 1),
      );
    }
    while (sent < 18) await send();
    await flip(t0 + 20_000, 50);
    await flip(t0 + 30_000, 95);

    const stored = await waitFor(
      async () => {
        const rows = await db.sql<{ ms: number }[]>`
          select s.time_ms::float8 as ms
          from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
          join series r on r.id = s.series_id join services v on v.id = r.service_id
          where v.name = 'load-1' and r.metric = 'cpu_percent'`.catch(() => undefined);
        if (rows === undefined) return undefined;
        const times = rows.map((row) => row.ms);
        return [...acknowledged].every((ms) => times.includes(ms)) ? times : undefined;
      },
      60_000,
      'every acknowledged sample in the promoted database',
    );
    expect(new Set(stored).size).toBe(stored.length);
    // Those sent while no primary answered included: the gateway needs Kafka and a key it knew.
    expect(acknowledged.size).toBe(sent);

    const alerts = await waitFor(
      async () => {
        const rows = await db.sql<{ status: string; fired_at: Date }[]>`
          select a.status, a.fired_at from alerts a join services v on v.id = a.service_id
          where v.name = 'load-1'`.catch(() => undefined);
        return rows !== undefined && rows.length > 0 ? rows : undefined;
      },
      60_000,
      'the alert',
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0]?.status).toBe('active');
    // Its window started with the first sample, before the kill: 2 minutes after it.
    expect(alerts[0]?.fired_at.getTime()).toBe(t0 + 120_000);

    // Each breach fired one alert, at its sample's time: the one during the outage resolved
    // by the next sample, the last one active; none twice.
    const breachAlerts = await waitFor(
      async () => {
        const rows = await db.sql<{ status: string; fired_at: Date }[]>`
          select a.status, a.fired_at from alerts a join services v on v.id = a.service_id
          where v.name = 'load-2' order by a.fired_at`.catch(() => undefined);
        return rows !== undefined && rows.some((row) => row.fired_at.getTime() === t0 + 30_000)
          ? rows
          : undefined;
      },
      60_000,
      'the alerts of both breaches',
    );
    expect(breaches).toEqual([t0 + 10_000, t0 + 30_000]);
    expect(breachAlerts.map((row) => [row.status, row.fired_at.getTime()])).toEqual([
      ['resolved', t0 + 10_000],
      ['active', t0 + 30_000],
    ]);

    // Each alert's messages reached the webhook once: its firing (the breach sent during the
    // outage included) and, for the resolved one, its resolution. Every message is recorded
    // delivered, so none is sent again later.
    const expectedKeys = (
      await db.sql<{ id: string; status: string }[]>`select id, status from alerts`
    ).flatMap(({ id, status }) =>
      status === 'resolved' ? [`${id}:fired`, `${id}:resolved`] : [`${id}:fired`],
    );
    expect(expectedKeys).toHaveLength(4);
    await waitFor(
      async () => {
        const [row] = await db.sql<{ delivered: number }[]>`
          select count(*)::int as delivered from notifications where status = 'delivered'`;
        return row?.delivered === expectedKeys.length ? true : undefined;
      },
      60_000,
      'every message delivered',
    );
    const [pending] = await db.sql<{ count: number }[]>`
      select count(*)::int as count from notifications where status <> 'delivered'`;
    expect(pending?.count).toBe(0);
    expect(
      webhook
        .accepted()
        .map((request) => request.headers['idempotency-key'])
        .sort(),
    ).toEqual(expectedKeys.sort());

    // Every role saw the primary change and counted the time without one.
    for (const [index, role] of roles.entries()) {
      const name = roleNames[index];
      const text = await waitFor(
        async () => {
          const exposition = await metricsOf(role);
          return metricValue(exposition, 'monitor_database_primary_changes_total') >= 1
            ? exposition
            : undefined;
        },
        30_000,
        `the ${name} role to count the change of primary`,
      );
      expect(metricValue(text, 'monitor_database_unavailable_seconds_total'), name).toBeGreaterThan(
        0,
      );
    }
    for (const role of roles) expect(role.ended()).toBeUndefined();
  }, 240_000);
});

/** The role's `/metrics` exposition. */
async function metricsOf(role: RoleProcess): Promise<string> {
  return (await fetch(`${role.baseUrl}/metrics`)).text();
}

/** The value of the one sample of `name` in `exposition` (NaN when absent). */
function metricValue(exposition: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(exposition);
  return match === null ? Number.NaN : Number(match[1]);
}

type ApiAnswer = { status: number | 'no answer'; retryAfter: string | null; error?: string };

/**
 * GETs `url` one request after the other until `until` settles, then once more: what a client
 * polling the API sees across the outage. A request left unanswered for 20 s (twice the
 * database's connect timeout) is recorded as `no answer`.
 */
async function pollUntil(url: string, key: string, until: Promise<unknown>): Promise<ApiAnswer[]> {
  let settled = false;
  void until.finally(() => (settled = true)).catch(() => undefined);
  const answers: ApiAnswer[] = [];
  for (let last = false; !last;) {
    last = settled;
    try {
      // Raw fetch, not createApiCall: this measures the HTTP exchange itself (an answer within
      // 20 s or none at all), which needs the abort signal and the network error.
      const response = await fetch(url, {
        headers: { 'x-api-key': key },
        signal: AbortSignal.timeout(20_000),
      });
      await response.arrayBuffer();
      answers.push({ status: response.status, retryAfter: response.headers.get('retry-after') });
    } catch (err) {
      answers.push({ status: 'no answer', retryAfter: null, error: String(err) });
    }
    if (!last) await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return answers;
}
