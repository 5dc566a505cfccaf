/**
 * `npm run bench:failover -- --scenario database` (issue 42, item 3): the database's primary
 * crashes under the usual load, in Kafka mode. A Patroni cluster (testkit: etcd, two TimescaleDB
 * nodes, synchronous_mode, ttl 10 s, loop_wait 2 s) serves a gateway, an api, a writer and an
 * evaluator given both hosts (`target_session_attrs=read-write`). After the baseline, the
 * leader's Patroni and its PostgreSQL postmaster get SIGKILL together (the machine is gone: no
 * shutdown checkpoint, no leader key released), and Patroni promotes the synchronous standby
 * once the key expires. It reports the time to the promotion, and the time from the kill until
 * the first sample acknowledged after it was queryable and the first alert fired after it was
 * listed, measured by the same probes as the role kills. On the surviving node itself it
 * measures when it first committed a write and when the writer's first batch was stored after
 * that (issue 60: within a second), and from the consumers' logs whether they kept their group
 * membership through the outage (no join after the kill: no rebalance). Then it checks in the
 * promoted database: every acknowledged sample stored once (the probe hosts' samples one by one, the
 * load's by count), each probe alert fired once, and an alert whose one-minute window was
 * pending at the kill fired once, at the end of that window.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import { countDuplicateSamples, listRuleAlerts, readMaxValue } from '@monitor/db/bench';
import type { BenchProcess } from './bench-process.js';
import { checkProbeAlerts, checkProbeSamples, listProbeSteps } from './failover-checks.js';
import { countLogLines, joinsAfter } from './failover-joins.js';
import { watchStorageResumption } from './failover-resumption.js';
import { logProgress } from './harness/progress.js';
import { int } from './report-text.js';
import { startProbedLoad, waitForAcknowledged } from './failover-load.js';
import { failoverProbeTag, failoverSeqMetric } from './failover-probe.js';
import { createProbeRules, probeHosts } from './failover-probe-http.js';
import type { DatabaseFailover } from './failover-report.js';
import { firstVisibleAfter } from './failover-stall.js';
import type { FailoverContext, FailoverTarget } from './failover-target.js';
import { createRule, waitForRulesLoaded } from './rules-api.js';

/** Issue 42: storage and alerting resume within 30 s of the kill. */
const targetResumeMs = 30_000;
/** Issue 60: the writer stores within 1 s of the new primary accepting writes. */
const targetStoredAfterAcceptedMs = 1_000;
/** The consumers' group, as the server names it (`writerGroupId`). */
const writerGroupId = 'writer';
/** What kafkajs logs when a member's session expired while it was away. */
const lostMemberText = 'not aware of this member';
/** The pending-window rule's duration: the kill falls inside it (baseline + warm-up < 60 s). */
const windowMinutes = 1;

export async function measureDatabaseFailover(
  { stack, headers, partitions, cluster }: FailoverTarget,
  { options, report, processes }: FailoverContext,
): Promise<void> {
  if (cluster === undefined) throw new Error('the database scenario runs on a Patroni cluster');
  logProgress('starting gateway, api, a writer and an evaluator');
  // One after the other: the machine is shared, and four Node processes starting at once
  // may each miss the time allowed for its start.
  const role = async (
    name: string,
    extraEnv: Record<string, string> = {},
  ): Promise<BenchProcess> => {
    const proc = await stack.startRole(name, { extraEnv });
    processes.push(proc);
    return proc;
  };
  const gateway = await role('gateway');
  const api = await role('api');
  // The consumers log their group joins (info), which the report reads back.
  const writer = await role('writer', { LOG_LEVEL: 'info' });
  const evaluator = await role('evaluator', { LOG_LEVEL: 'info' });
  const topic = stack.env['SAMPLES_TOPIC'] ?? '';
  const hosts = probeHosts(partitions);
  const ruleIds = await createProbeRules(api.baseUrl, headers, hosts);
  const windowHost = hosts[0] ?? '';
  // Holds from the first probe sample of its host on (the step number is never negative).
  const windowRuleId = await createRule(api.baseUrl, headers, {
    name: 'failover pending window',
    metric: failoverSeqMetric,
    condition: 'greater_than',
    threshold: -1,
    duration_minutes: windowMinutes,
    severity: 'info',
    scope: { [failoverProbeTag]: windowHost },
  });
  await waitForRulesLoaded(evaluator.baseUrl, ruleIds.length + 1);

  const probed = startProbedLoad(
    options,
    { gatewayBaseUrl: gateway.baseUrl, apiBaseUrl: api.baseUrl, headers },
    { hosts, ruleIds },
  );
  await probed.waitOutBaseline();

  const killed = await cluster.leader();
  const databaseName = databaseNameOf(stack.databaseUrl);
  const survivors = cluster.nodes
    .filter((node) => node.name !== killed.name)
    .map((node) => ({ name: node.name, url: node.url.replace(/\/postgres$/, `/${databaseName}`) }));
  logProgress(`SIGKILL to ${killed.name}'s Patroni and PostgreSQL postmaster`);
  const killAtMs = performance.now();
  const killAtWallMs = Date.now();
  await cluster.kill(killed);
  const resumption = watchStorageResumption(
    survivors,
    { topic, groupId: writerGroupId },
    killAtMs + 120_000 + options.observeSeconds * 1000,
  );
  const promoted = await cluster.leader({ not: killed, timeoutMs: 120_000 });
  const promotionMs = performance.now() - killAtMs;
  logProgress(`${promoted.name} promoted after ${(promotionMs / 1000).toFixed(1)} s`);
  const resumed = await resumption;
  if (resumed !== undefined)
    logProgress(
      `${resumed.node} accepted writes ${int(resumed.acceptedAtMs - killAtMs)} ms after the kill; ` +
        `the writer stored ${resumed.firstStoredAtMs === undefined ? 'nothing' : `${int(resumed.firstStoredAtMs - resumed.acceptedAtMs)} ms`} after that`,
    );
  await sleep(
    Math.max(0, killAtMs + promotionMs + options.observeSeconds * 1000 - performance.now()),
  );
  // The window opened with the host's first sample: run until a step past its end is stored.
  if (!(await waitForSeq(stack.db, windowHost, windowMinutes * 60 + 1)))
    report.notes.push(`${windowHost} did not reach the end of the pending window within 4 minutes`);

  const results = await probed.stop();
  report.load = results.load;
  report.probes = results.summary;
  const { alertProbes, storedProbes, acknowledged } = results;
  // Even steps breach (the rule fires); odd ones clear it (the alert resolves).
  const firingProbes = results.probes.flatMap((r) => r.alert.filter((_, step) => step % 2 === 0));
  const windowEndMs = performance.now();

  const landed = await waitForAcknowledged(stack.db, acknowledged);
  const endWallMs = Date.now();
  const membership = [writer, evaluator].map((proc) => ({
    process: proc.name,
    membersBefore: [
      ...new Set(joinsAfter(proc, topic, 0, killAtWallMs).map((join) => join.memberId)),
    ],
    joinsAfter: joinsAfter(proc, topic, killAtWallMs, endWallMs),
    lostMemberLines: countLogLines(proc, lostMemberText, killAtWallMs),
  }));
  const database: DatabaseFailover = {
    killed: killed.name,
    promoted: promoted.name,
    promotionMs,
    acceptedWritesMs: resumed === undefined ? undefined : resumed.acceptedAtMs - killAtMs,
    storedAfterAcceptedMs:
      resumed?.firstStoredAtMs === undefined
        ? undefined
        : resumed.firstStoredAtMs - resumed.acceptedAtMs,
    membership,
    firstStoredMs: firstVisibleAfter(storedProbes, killAtMs),
    firstFiredMs: firstVisibleAfter(firingProbes, killAtMs),
    stall: {
      alert: probed.stallAfter(alertProbes, killAtMs, windowEndMs),
      stored: probed.stallAfter(storedProbes, killAtMs, windowEndMs),
    },
    samples: {
      acknowledged,
      stored: landed.stored,
      duplicates: await countDuplicateSamples(stack.db),
      probeHosts: checkProbeSamples(await listProbeSteps(stack.db, hosts), hosts, results.probes),
    },
    alerts: await checkProbeAlerts(stack.db, ruleIds, results.probes),
    pendingWindow: await checkWindowAlert(
      stack.db,
      windowRuleId,
      probed.startEventTimeMs + windowMinutes * 60_000,
    ),
  };
  report.database = database;
  report.storage = { acknowledged, stored: landed.stored, drained: landed.drained };
  const writerKept = membership.find((m) => m.process === writer.name);
  report.target.met =
    database.storedAfterAcceptedMs !== undefined &&
    database.storedAfterAcceptedMs <= targetStoredAfterAcceptedMs &&
    writerKept !== undefined &&
    writerKept.joinsAfter.length === 0 &&
    writerKept.lostMemberLines === 0 &&
    database.firstStoredMs !== undefined &&
    database.firstStoredMs <= targetResumeMs &&
    database.firstFiredMs !== undefined &&
    database.firstFiredMs <= targetResumeMs &&
    landed.stored === acknowledged &&
    database.samples.duplicates === 0 &&
    database.samples.probeHosts.missing === 0 &&
    database.samples.probeHosts.duplicates === 0 &&
    database.alerts.fired === database.alerts.expected &&
    database.alerts.duplicates === 0 &&
    database.pendingWindow.firedOnceOnTime;
}

/** The database name of a libpq URL, one host or several (`new URL` refuses the latter). */
function databaseNameOf(url: string): string {
  const name = /@[^/]*\/([^?]+)/.exec(url)?.[1];
  if (name === undefined) throw new Error('the database URL names no database');
  return name;
}

/** Whether `host`'s stored step number reached `seq` within 4 minutes. */
async function waitForSeq(db: Database, host: string, seq: number): Promise<boolean> {
  const deadline = performance.now() + 240_000;
  while (performance.now() < deadline) {
    // A failed read (the server is being replaced) counts as not there yet.
    const stored = await readMaxValue(db, host, failoverSeqMetric).catch(() => null);
    if ((stored ?? -1) >= seq) return true;
    await sleep(500);
  }
  return false;
}

/** The rule whose window was pending at the kill: one alert, fired as the window ended. */
async function checkWindowAlert(
  db: Database,
  ruleId: string,
  expectedFiredAtMs: number,
): Promise<DatabaseFailover['pendingWindow']> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    const rows = await listRuleAlerts(db, ruleId);
    if (rows.length > 0 || performance.now() > deadline) {
      return {
        expectedFiredAt: new Date(expectedFiredAtMs).toISOString(),
        alerts: rows.map((row) => ({ status: row.status, firedAt: row.firedAt.toISOString() })),
        firedOnceOnTime:
          rows.length === 1 &&
          rows[0]?.status === 'active' &&
          rows[0].firedAt.getTime() === expectedFiredAtMs,
      };
    }
    await sleep(500);
  }
}
