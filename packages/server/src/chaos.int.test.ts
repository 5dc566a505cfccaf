// @services redis
import { randomBytes } from 'node:crypto';
import { availableParallelism, loadavg } from 'node:os';
import { afterAll, describe, expect, it } from 'vitest';
import { buildAlertRuleCreateRequest, createApiCall, waitFor } from '@monitor/testkit/builders';
import {
  startHttpReceiver,
  startRestartableKafka,
  startRestartablePostgres,
} from '@monitor/testkit';
import type { HttpReceiver, RestartableKafka, RestartablePostgres } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { evaluatorGroupId, writerGroupId } from './consumer-groups.js';
import type { ExpectedAlert, TimedValue } from './testing/expected-alerts.js';
import { expectedAlerts } from './testing/expected-alerts.js';
import type { IngestAttempt } from './testing/ingest-load.js';
import { sampleKey, startIngestLoad } from './testing/ingest-load.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack, evaluatorRulesLoaded } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';

/**
 * The chaos suite (docs/reliability.md): every role as its own process over a private Kafka
 * broker and PostgreSQL server that it can restart, under a bounded ingest load from a fleet
 * of hosts some of which breach an alert rule. In turn it SIGKILLs and restarts each role, then
 * restarts Kafka and PostgreSQL, waiting after each fault until the pipeline caught up; then
 * it checks what the data says against what the load was told.
 */

const minuteMs = 60_000;
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const metric = 'cpu_percent';
const threshold = 90;
const durationMinutes = 1;
const hostCount = 48;
const hostsPerRequest = 8;
/** 6 requests a round, ~15 rounds a second: ~90 requests and ~720 samples a second. */
const roundIntervalMs = 66;
const maxRounds = 2_400;
const maxLoadMs = 180_000;
/** Generous deadlines for the pipeline to catch up: no timing is asserted, only recovery. */
const catchUpTimeoutMs = 120_000;
/**
 * A gateway answering no 200 this long while the other does, or a consumer group not moving
 * while behind, is restarted (and reported as an incident).
 */
const stuckAfterMs = 30_000;

const hosts = Array.from({ length: hostCount }, (_, i) => `chaos-${String(i).padStart(2, '0')}`);

/**
 * A host's cpu_percent per round, reproducible: every 4th host now and then breaches the rule
 * for a few rounds (one-round breaches too, which must not fire), the others never do.
 */
function hostSeries(index: number): number[] {
  let seed = index * 7_919 + 17;
  const random = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const flaps = index % 4 === 0;
  let breaching = false;
  return Array.from({ length: maxRounds }, () => {
    breaching = flaps && (breaching ? random() < 0.75 : random() < 0.015);
    return breaching ? 91 + Math.floor(random() * 9) : 20 + Math.floor(random() * 60);
  });
}

type FaultFigures = {
  fault: string;
  injectedAtMs: number;
  /** The role's process (or the server) answers again. */
  readyAtMs: number;
  /** Every gateway answered 200 to a request sent after `readyAtMs`. */
  firstOkAtMs: number;
  /** Kafka lag of writer and evaluator back to 0 (against the end offsets at `readyAtMs`), and
   * the outbox rows and investigations created before `readyAtMs` done. */
  caughtUpAtMs: number;
};

let kafka: RestartableKafka | undefined;
let postgres: RestartablePostgres | undefined;
let stack: MonitorStack | undefined;
let receiver: HttpReceiver | undefined;

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
  await Promise.all([kafka?.destroy(), postgres?.destroy()]);
});

describe('chaos in Kafka mode', () => {
  it('stores every acknowledged sample once, fires each alert once and notifies it, through a crash of every role, Kafka and PostgreSQL', async () => {
    const startedAtMs = Date.now();
    [kafka, postgres, receiver] = await Promise.all([
      startRestartableKafka(),
      startRestartablePostgres(),
      startHttpReceiver(),
    ]);
    const broker = kafka;
    const database = postgres;
    const webhook = receiver;
    stack = await createMonitorStack(
      'chaos',
      {
        MONITOR_BOOTSTRAP_API_KEY: key,
        REDIS_URL: serviceUrl('redis'),
        INGEST_RATE_LIMIT_PER_MINUTE: '1000000',
        // An outage answers 503 quickly, and the gateways need PostgreSQL for keys soon.
        INGEST_PUBLISH_TIMEOUT_MS: '2000',
        API_KEY_CACHE_TTL_MS: '2000',
        // A killed investigator's claim is taken over soon.
        INVESTIGATOR_LEASE_MS: '10000',
        INVESTIGATOR_EVIDENCE_WAIT_MS: '5000',
        LOG_LEVEL: 'warn',
      },
      { postgresUrl: database.url, kafkaBrokers: broker.url },
    );
    const { db, env } = stack;
    const topic = env['SAMPLES_TOPIC']!;
    const start = stack.start;

    // Every role in its own process, two gateways; `procs` always holds the live one of each.
    const names = [
      'gateway0',
      'gateway1',
      'writer',
      'evaluator',
      'api',
      'notifier',
      'investigator',
    ];
    const roleOf = (name: string): string => name.replace(/\d+$/, '');
    const started = await Promise.all(names.map((name) => start(roleOf(name))));
    const procs = new Map(names.map((name, i) => [name, started[i]!]));
    const proc = (name: string): RoleProcess => procs.get(name)!;
    const gatewayNames = ['gateway0', 'gateway1'];

    const call = createApiCall({ baseUrl: () => proc('api').baseUrl, key });
    expect(
      (
        await call('/api/v1/notification-channels/webhook', {
          method: 'PUT',
          body: { url: webhook.url, secret: 'whsec-chaos-0123456789' },
        })
      ).status,
    ).toBe(200);
    const rule = await call('/api/v1/alerts/rules', {
      method: 'POST',
      body: buildAlertRuleCreateRequest({
        name: 'cpu over 90',
        metric,
        threshold,
        duration_minutes: durationMinutes,
        severity: 'warning',
        channels: ['webhook'],
      }),
    });
    expect(rule.status).toBe(201);
    await evaluatorRulesLoaded(proc('evaluator').baseUrl, 1);

    const series = new Map(hosts.map((host, index) => [host, hostSeries(index)]));
    const baseMs = Math.floor(Date.now() / minuteMs) * minuteMs - (maxRounds + 60) * minuteMs;
    const load = startIngestLoad({
      key,
      gateways: () => gatewayNames.map((name) => proc(name).baseUrl),
      hosts,
      hostsPerRequest,
      baseMs,
      stepMs: minuteMs,
      metric,
      value: (host, round) => series.get(host)![round]!,
      maxRounds,
      maxDurationMs: maxLoadMs,
      roundIntervalMs,
      requestTimeoutMs: 15_000,
    });
    let loadEnded = false;
    void load.finished.then(() => (loadEnded = true));

    const tail = (name: string): string =>
      `--- ${name} ---\n${proc(name).output().trimEnd().split('\n').slice(-12).join('\n')}`;

    /**
     * What went wrong on the way that a deployment's supervisor papers over: a role that exited
     * on its own (docker-compose.yml restarts them: `restart: unless-stopped`), a gateway that
     * stopped answering (a liveness probe restarts it). The suite does the same, so the run goes
     * on to the data checks, and fails at the end with these.
     */
    const incidents: string[] = [];
    async function supervise(during: string): Promise<void> {
      for (const name of names) {
        const ended = proc(name).ended();
        if (ended === undefined) continue;
        incidents.push(`${name} exited on its own (${ended}) during "${during}":\n${tail(name)}`);
        procs.set(name, await start(roleOf(name)));
      }
    }

    /**
     * The time every gateway answered 200 to a request sent at or after `sinceMs`. A gateway that
     * answers no 200 for `stuckAfterMs` while another does is recorded and restarted.
     */
    async function everyGatewayOk(sinceMs: number, during: string): Promise<number> {
      let stuckSinceMs = sinceMs;
      return waitFor(
        async () => {
          await supervise(during);
          if (loadEnded) throw new Error(`the load reached its bounds during "${during}"`);
          const firsts = gatewayNames.map(
            (_, index) =>
              load.attempts.find(
                (a) => a.gateway === index && a.status === 200 && a.sentAtMs >= sinceMs,
              )?.answeredAtMs,
          );
          if (firsts.every((at) => at !== undefined)) return Math.max(...firsts);
          if (Date.now() - stuckSinceMs < stuckAfterMs) return undefined;
          for (const [index, name] of gatewayNames.entries()) {
            if (firsts[index] !== undefined) continue;
            const answers = countBy(
              load.attempts.filter((a) => a.gateway === index && a.sentAtMs >= sinceMs),
              (a) => String(a.status),
            );
            incidents.push(
              `${name} answered no 200 for ${stuckAfterMs / 1000} s after "${during}" ` +
                `(its answers by status, 0 = none: ${JSON.stringify(answers)}); restarted:\n${tail(name)}`,
            );
            await proc(name).kill();
            procs.set(name, await start('gateway'));
          }
          stuckSinceMs = Date.now();
          return undefined;
        },
        catchUpTimeoutMs,
        `every gateway to answer 200 after "${during}"`,
      );
    }

    /**
     * Resolves with the time writer and evaluator have consumed everything the topic held at
     * the call (consumer lag back to 0 against that), and every outbox row and investigation
     * created before `sinceMs` (`now`: before each check) is done.
     */
    async function caughtUp(sinceMs: number | 'now', during: string): Promise<number> {
      let lastSeen = '';
      const seen = (what: unknown): undefined => {
        lastSeen = String(what);
        return undefined;
      };
      try {
        const ends = await waitFor(
          async () => {
            await supervise(during);
            try {
              return (await broker.groupOffsets(writerGroupId, topic)).map((p) => p.end);
            } catch (err) {
              return seen(err); // the broker is still starting
            }
          },
          catchUpTimeoutMs,
          'the end offsets of the samples topic',
        );
        // A consumer group whose committed offsets stay put this long while behind is stuck:
        // recorded, and its role restarted (as a lag alert would have someone do).
        const progress = new Map<string, { committed: number; atMs: number }>();
        return await waitFor(
          async () => {
            await supervise(during);
            try {
              for (const group of [writerGroupId, evaluatorGroupId]) {
                const offsets = await broker.groupOffsets(group, topic);
                const behind = offsets.map((p) => Math.max(0, ends[p.partition]! - p.committed));
                if (behind.every((n) => n === 0)) continue;
                const committed = offsets.reduce((sum, p) => sum + p.committed, 0);
                const last = progress.get(group);
                if (last === undefined || committed > last.committed) {
                  progress.set(group, { committed, atMs: Date.now() });
                } else if (Date.now() - last.atMs > stuckAfterMs) {
                  incidents.push(
                    `the ${group} consumer group made no progress for ${stuckAfterMs / 1000} s ` +
                      `after "${during}", behind by ${behind.join()} records; restarted:\n${tail(group)}`,
                  );
                  await proc(group).kill();
                  procs.set(group, await start(group));
                  progress.delete(group);
                }
                return seen(`${group} behind by ${behind.join()}`);
              }
              const cutoff = sinceMs === 'now' ? new Date() : new Date(sinceMs);
              const [open] = await db.sql<{ notifications: number; investigations: number }[]>`
                select
                  (select count(*)::int from notifications
                    where status = 'pending' and created_at <= ${cutoff}) as notifications,
                  (select count(*)::int from investigations
                    where status in ('queued', 'running') and created_at <= ${cutoff})
                    as investigations`;
              if (open!.notifications === 0 && open!.investigations === 0) return Date.now();
              return seen(`open: ${JSON.stringify(open)}`);
            } catch (err) {
              return seen(err); // a server is still coming back
            }
          },
          catchUpTimeoutMs,
          `the pipeline to catch up after "${during}"`,
        );
      } catch (err) {
        const logs = names.map(tail).join('\n');
        throw new Error(`${(err as Error).message} (last seen: ${lastSeen})\n${logs}`, {
          cause: err,
        });
      }
    }

    const figures: FaultFigures[] = [];
    async function fault(
      name: string,
      inject: () => Promise<void>,
      downMs: number,
      restore: () => Promise<void>,
    ): Promise<void> {
      const injectedAtMs = Date.now();
      await inject();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      await restore();
      const readyAtMs = Date.now();
      const firstOkAtMs = await everyGatewayOk(readyAtMs, name);
      const caughtUpAtMs = await caughtUp(readyAtMs, name);
      figures.push({ fault: name, injectedAtMs, readyAtMs, firstOkAtMs, caughtUpAtMs });
      console.log(
        `chaos: ${name}: down ${readyAtMs - injectedAtMs} ms, first 200 after ${firstOkAtMs - readyAtMs} ms, ` +
          `caught up after ${caughtUpAtMs - readyAtMs} ms; ${load.roundsDone()} rounds so far`,
      );
    }
    const crash = (name: string) =>
      fault(
        `SIGKILL ${name}`,
        () => proc(name).kill(),
        500,
        async () => {
          procs.set(name, await start(roleOf(name)));
        },
      );

    /** The figures of the run so far: printed at the end, and on the way out of a failure. */
    const report = (partial: boolean) => ({
      partial,
      machine: {
        nproc: availableParallelism(),
        date: new Date(startedAtMs).toISOString(),
        loadavg: loadavg().map((n) => Number(n.toFixed(2))),
      },
      load: {
        hosts: hostCount,
        rounds: load.roundsDone(),
        requests: load.attempts.length,
        answers: countBy(load.attempts, (a) => String(a.status)),
        acknowledgedSamples: load.acknowledged.size,
      },
      faults: figures.map((f) => {
        const during = load.attempts.filter((a) => faultOf(a) === f);
        return {
          fault: f.fault,
          downMs: f.readyAtMs - f.injectedAtMs,
          firstOkMs: f.firstOkAtMs - f.readyAtMs,
          caughtUpMs: f.caughtUpAtMs - f.readyAtMs,
          requests: during.length,
          '5xx': during.filter((a) => a.status >= 500).length,
          '503+Retry-After': during.filter((a) => a.status === 503 && a.retryAfter !== null).length,
          noAnswer: during.filter((a) => a.status === 0).length,
        };
      }),
      incidents: incidents.map((incident) => incident.split('\n', 1)[0]),
      totalSeconds: Number(((Date.now() - startedAtMs) / 1000).toFixed(1)),
    });
    /** The fault whose window (injected → every gateway answered 200 again) an answer overlaps. */
    const faultOf = (attempt: IngestAttempt): FaultFigures | undefined =>
      figures.find(
        (f) => attempt.sentAtMs <= f.firstOkAtMs && attempt.answeredAtMs >= f.injectedAtMs,
      );

    // Load running and alerts flowing before the first fault.
    await waitFor(
      () => Promise.resolve(load.roundsDone() >= 60 ? true : undefined),
      60_000,
      'the load to warm up',
    );
    const loadWarmAtMs = Date.now();
    try {
      // The notifier first: a claim it held when killed is only taken over once its lease
      // (60 s) ended, which the faults after it then overlap.
      await crash('notifier');
      await crash('investigator');
      await crash('writer');
      await crash('evaluator');
      await crash('gateway0');
      await fault(
        'restart Kafka',
        () => broker.stop(),
        3_000,
        () => broker.start(),
      );
      await fault(
        'restart PostgreSQL',
        () => database.stop(),
        3_000,
        () => database.start(),
      );
    } catch (err) {
      console.log(`CHAOS_FIGURES ${JSON.stringify(report(true))}`);
      console.log(incidents.join('\n\n'));
      throw err;
    }
    await load.stop();
    const loadEndAtMs = Date.now();
    // Then everything the load caused: consumed, fired, notified, investigated.
    try {
      await caughtUp(Date.now(), 'the end of the load');
      await caughtUp('now', 'the end of the load');
    } catch (err) {
      console.log(`CHAOS_FIGURES ${JSON.stringify(report(true))}`);
      console.log(incidents.join('\n\n'));
      throw err;
    }
    const drainedAtMs = Date.now();

    // What was stored, fired and delivered.
    const stored = await db.sql<{ host: string; time: Date; value: number; copies: number }[]>`
      select v.name as host, timestamptz 'epoch' + s.time_ms * interval '1 millisecond' as time,
        min(s.value) as value, count(*)::int as copies
      from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
      join series r on r.id = s.series_id join services v on v.id = r.service_id
      where r.metric = ${metric}
      group by v.name, s.time_ms`;
    type AlertRow = {
      id: string;
      rule_id: string;
      host: string;
      status: string;
      started_at: Date;
      fired_at: Date;
      resolved_at: Date | null;
    };
    const alerts = await db.sql<AlertRow[]>`
      select id, rule_id, host, status, started_at, fired_at, resolved_at from alerts`;
    const outbox = await db.sql<{ status: string; n: number }[]>`
      select status, count(*)::int as n from notifications group by status`;
    const investigations = await db.sql<{ status: string; n: number }[]>`
      select status, count(*)::int as n from investigations group by status`;
    const receivedKeys = webhook
      .accepted()
      .map((request) => String(request.headers['idempotency-key']));
    const deliveries = countBy(receivedKeys, (k) => k);

    const figuresOfRun = {
      ...report(false),
      stored: {
        samples: stored.length,
        loadSeconds: Number(((loadEndAtMs - loadWarmAtMs) / 1000).toFixed(1)),
        drainSeconds: Number(((drainedAtMs - loadEndAtMs) / 1000).toFixed(1)),
      },
      alerts: {
        fired: alerts.length,
        resolved: alerts.filter((a) => a.status === 'resolved').length,
        outbox: Object.fromEntries(outbox.map((row) => [row.status, row.n])),
        webhookDeliveries: receivedKeys.length,
        duplicateDeliveries: receivedKeys.length - Object.keys(deliveries).length,
        investigations: Object.fromEntries(investigations.map((row) => [row.status, row.n])),
      },
    };
    console.log(`CHAOS_FIGURES ${JSON.stringify(figuresOfRun)}`);
    console.table(figuresOfRun.faults);

    // Soft: every check runs and reports, so one finding does not hide another.
    // Every acknowledged sample is stored, exactly once, with the value sent; nothing else is.
    const keyOf = (row: { host: string; time: Date }) => sampleKey(row.host, row.time.getTime());
    const storedKeys = new Set(stored.map(keyOf));
    expect
      .soft(
        [...load.acknowledged].filter((k) => !storedKeys.has(k)),
        'DATA LOSS: samples answered 200 that were never stored',
      )
      .toEqual([]);
    expect
      .soft(stored.filter((row) => row.copies !== 1).map(keyOf), 'samples stored more than once')
      .toEqual([]);
    const sentValue = (host: string, timeMs: number) =>
      series.get(host)?.[(timeMs - baseMs) / minuteMs];
    expect
      .soft(
        stored.filter((row) => sentValue(row.host, row.time.getTime()) !== row.value).map(keyOf),
        'stored samples the load never sent (or with another value)',
      )
      .toEqual([]);

    // Ingest answers: never a 4xx; a 5xx or no answer only while a fault was in progress.
    expect
      .soft(
        load.attempts
          .filter(
            (a) =>
              a.status !== 200 && ((a.status >= 400 && a.status < 500) || faultOf(a) === undefined),
          )
          .map((a) => ({ ...a, sentAt: new Date(a.sentAtMs).toISOString() })),
        'ingest failures outside every fault (or 4xx)',
      )
      .toEqual([]);

    // At most one active alert per (rule, host), and the alerts the stored samples call for.
    const active = countBy(
      alerts.filter((a) => a.status === 'active'),
      (a) => `${a.rule_id}|${a.host}`,
    );
    expect
      .soft(
        Object.entries(active).filter(([, n]) => n > 1),
        'DUPLICATE ACTIVE ALERTS for one (rule, host)',
      )
      .toEqual([]);
    const storedSeries = new Map<string, TimedValue[]>();
    for (const row of stored) {
      const points = storedSeries.get(row.host) ?? [];
      points.push({ timeMs: row.time.getTime(), value: row.value });
      storedSeries.set(row.host, points);
    }
    const order = (a: ExpectedAlert, b: ExpectedAlert) =>
      a.host.localeCompare(b.host) || a.firedAt - b.firedAt;
    const expected = [...storedSeries]
      .flatMap(([host, points]) =>
        expectedAlerts(
          host,
          points.sort((a, b) => a.timeMs - b.timeMs),
          { threshold, durationMinutes },
        ),
      )
      .sort(order);
    const actual = alerts
      .map((row) => ({
        host: row.host,
        startedAt: row.started_at.getTime(),
        firedAt: row.fired_at.getTime(),
        resolvedAt: row.resolved_at?.getTime() ?? null,
      }))
      .sort(order);
    expect.soft(expected.length, 'the load makes alerts fire').toBeGreaterThan(20);
    expect
      .soft(actual, 'alerts fired and resolved other than the stored samples say')
      .toEqual(expected);

    // Every transition delivered at least once under its idempotency key; duplicates allowed.
    const transitions = alerts.flatMap((a) => [
      `${a.id}:fired`,
      ...(a.resolved_at === null ? [] : [`${a.id}:resolved`]),
    ]);
    expect
      .soft(
        transitions.filter((k) => deliveries[k] === undefined),
        'notifications never delivered',
      )
      .toEqual([]);
    expect
      .soft(figuresOfRun.alerts.outbox, 'outbox rows not delivered')
      .toEqual({ delivered: transitions.length });
    expect
      .soft(
        investigations.filter((row) => row.status === 'queued' || row.status === 'running'),
        'investigations stuck',
      )
      .toEqual([]);

    // Last: what the supervisor had to restart. Each is a bug even though nothing was lost.
    expect(incidents, 'ROLES CRASHED OR HUNG under the faults').toEqual([]);
  }, 480_000);
});

function countBy<T>(items: readonly T[], keyOf: (item: T) => string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) counts[keyOf(item)] = (counts[keyOf(item)] ?? 0) + 1;
  return counts;
}
