/**
 * `npm run bench:failover -- --scenario shard` (issue 59, item 5): one sample shard's primary
 * crashes under the usual load while the other shards carry on. Three shards: s0 (the control
 * database) and s2 on testkit's TimescaleDB, s1 a Patroni cluster (etcd, two TimescaleDB nodes,
 * as the database scenario runs it); partition p on shard `p % 3`. A gateway, an api, a writer
 * and an evaluator run over Kafka. After the baseline, s1's leader (Patroni and postmaster) gets
 * SIGKILL and Patroni promotes its standby. The probes read what was stored through PromQL with
 * `partial_response=true`, so the other shards' samples stay readable while s1 is away.
 *
 * It reports the promotion, when s1's partitions stored and alerted again, the other shards'
 * stall, each shard's stored bus records per second before the kill and while s1 was away (the
 * writer's offsets, stored in each batch's transaction), and a PromQL read every second, strict
 * and partial: what each answered while s1 was away. Then it checks on every shard: each
 * acknowledged sample stored once, each probe host on its partition's shard only, and each probe
 * alert fired once.
 */
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Database } from '@monitor/db';
import { createDatabase } from '@monitor/db';
import type { BenchProcess } from './bench-process.js';
import { countDuplicateSamples, countSamples, readCommittedRecords } from '@monitor/db/bench';
import { checkProbeAlerts, checkProbeSamples, listProbeSteps } from './failover-checks.js';
import { startProbedLoad } from './failover-load.js';
import { failoverSeqMetric } from './failover-probe.js';
import { createProbeRules, probeHosts } from './failover-probe-http.js';
import type { ShardFailover } from './failover-report.js';
import type { ProbeLatency } from './failover-stall.js';
import { firstVisibleAfter } from './failover-stall.js';
import type { FailoverContext, FailoverTarget } from './failover-target.js';
import { logProgress } from './harness/progress.js';
import { waitForRulesLoaded } from './rules-api.js';
import { waitForCount } from './wait-for-landed.js';

/** Issue 59: the shard's partitions resume within 30 s of the kill. */
const targetResumeMs = 30_000;
/** The consumers' group, as the server names it (`writerGroupId`). */
const writerGroupId = 'writer';
/** The shard whose primary is killed: a Patroni cluster. */
const killedShard = 1;

export async function measureShardFailover(
  { stack, headers, partitions, cluster }: FailoverTarget,
  { options, report, processes }: FailoverContext,
): Promise<void> {
  if (cluster === undefined) throw new Error('the shard scenario runs s1 on a Patroni cluster');
  const shardCount = stack.sampleShardUrls.length;
  const shardOf = (partition: number): number => partition % shardCount;
  logProgress('starting gateway, api, a writer and an evaluator');
  // One after the other: four Node processes starting at once may each miss their start time.
  const role = async (name: string): Promise<BenchProcess> => {
    const proc = await stack.startRole(name);
    processes.push(proc);
    return proc;
  };
  const gateway = await role('gateway');
  const api = await role('api');
  await role('writer');
  const evaluator = await role('evaluator');
  const topic = stack.env['SAMPLES_TOPIC'] ?? '';
  const hosts = probeHosts(partitions);
  const ruleIds = await createProbeRules(api.baseUrl, headers, hosts);
  await waitForRulesLoaded(evaluator.baseUrl, ruleIds.length);

  const shardDbs = stack.sampleShardUrls.map((url) =>
    createDatabase({
      url,
      maxConnections: 2,
      connectTimeoutSeconds: 2,
      applicationName: 'monitor-bench-probe',
    }),
  );
  let watch: ReturnType<typeof watchShards> | undefined;
  try {
    const probed = startProbedLoad(
      options,
      { gatewayBaseUrl: gateway.baseUrl, apiBaseUrl: api.baseUrl, headers },
      { hosts, ruleIds, storedVia: 'promql-partial' },
    );
    watch = watchShards(shardDbs, topic, api.baseUrl, headers);
    await probed.waitOutBaseline();

    const killed = await cluster.leader();
    logProgress(`SIGKILL to s${killedShard}'s leader ${killed.name} (Patroni and PostgreSQL)`);
    const killAtMs = performance.now();
    await cluster.kill(killed);
    const promoted = await cluster.leader({ not: killed, timeoutMs: 120_000 });
    const promotionMs = performance.now() - killAtMs;
    logProgress(`${promoted.name} promoted after ${(promotionMs / 1000).toFixed(1)} s`);
    await sleep(options.observeSeconds * 1000);
    const results = await probed.stop();
    const windowEndMs = performance.now();
    const timeline = await watch.stop();
    report.load = results.load;
    report.probes = results.summary;

    const onKilled = (p: ProbeLatency): boolean => shardOf(p.partition) === killedShard;
    const firing = results.probes.flatMap((r) => r.alert.filter((_, step) => step % 2 === 0));
    // The other shards' probes: their stall from the kill on, as the role kills measure it.
    const othersStall = {
      alert: probed.stallAfter(
        firing.filter((p) => !onKilled(p)),
        killAtMs,
        windowEndMs,
      ),
      stored: probed.stallAfter(
        results.storedProbes.filter((p) => !onKilled(p)),
        killAtMs,
        windowEndMs,
      ),
    };
    const resumedMs = {
      stored: firstVisibleAfter(results.storedProbes.filter(onKilled), killAtMs),
      fired: firstVisibleAfter(firing.filter(onKilled), killAtMs),
    };
    // s1 was away from the kill until its first probe sample after it was readable.
    const awayUntilMs = killAtMs + (resumedMs.stored ?? windowEndMs - killAtMs);

    logProgress('waiting for the writer to store every acknowledged sample on the shards');
    const countAll = async (): Promise<number> =>
      (await Promise.all(shardDbs.map((db) => countSamples(db)))).reduce((a, b) => a + b, 0);
    const landed = await waitForCount(countAll, {
      expected: results.acknowledged,
      timeoutMs: 120_000,
      pollIntervalMs: 500,
      settleMs: 2_000,
    });
    // Each shard's rows of the probe hosts, listed once for both checks.
    const probeSteps = await Promise.all(shardDbs.map((db) => listProbeSteps(db, hosts)));
    const shard: ShardFailover = {
      shards: shardCount,
      killedShard: `s${killedShard}`,
      killed: killed.name,
      promoted: promoted.name,
      promotionMs,
      killedShardResumedMs: resumedMs,
      othersStall,
      records: recordRates(timeline, shardCount, {
        baselineFromMs: killAtMs - options.baselineSeconds * 1000,
        killAtMs,
        awayUntilMs,
      }),
      reads: readsWhileAway(timeline, killAtMs, awayUntilMs),
      samples: {
        acknowledged: results.acknowledged,
        stored: landed.stored,
        duplicates: (await Promise.all(shardDbs.map((db) => countDuplicateSamples(db)))).reduce(
          (a, b) => a + b,
          0,
        ),
        probeHosts: checkProbeSamples(probeSteps.flat(), hosts, results.probes),
        misplacedProbeHosts: countMisplaced(probeSteps, hosts, shardOf),
      },
      alerts: await checkProbeAlerts(stack.db, ruleIds, results.probes),
    };
    report.shard = shard;
    report.storage = {
      acknowledged: results.acknowledged,
      stored: landed.stored,
      drained: landed.drained,
    };
    const others = shard.records.filter((r) => r.shard !== shard.killedShard);
    report.target.met =
      resumedMs.stored !== undefined &&
      resumedMs.stored <= targetResumeMs &&
      resumedMs.fired !== undefined &&
      resumedMs.fired <= targetResumeMs &&
      othersStall.stored.probesOver === 0 &&
      othersStall.alert.probesOver === 0 &&
      others.every((r) => r.whileAwayPerSecond > 0) &&
      shard.reads.partial.some((read) => read.status === 200 && read.warned) &&
      shard.reads.strict.every((read) => read.status === 503 || read.status === 200) &&
      landed.stored === results.acknowledged &&
      shard.samples.duplicates === 0 &&
      shard.samples.probeHosts.missing === 0 &&
      shard.samples.probeHosts.duplicates === 0 &&
      shard.samples.misplacedProbeHosts === 0 &&
      shard.alerts.fired === shard.alerts.expected &&
      shard.alerts.duplicates === 0;
  } finally {
    // Stopped twice on success: the second stop finds the loop done.
    await watch?.stop();
    await Promise.all(shardDbs.map((db) => db.close({ timeoutSeconds: 1 })));
  }
}

/** What the watcher saw each second: each shard's stored records, and two PromQL reads. */
type WatchPoint = {
  atMs: number;
  /** The writer's stored offsets summed per shard; undefined: the shard did not answer. */
  records: (number | undefined)[];
  strict: ObservedRead;
  partial: ObservedRead;
};

type ObservedRead = { status: number | 'no answer'; errorType?: string; warned: boolean };

/** Polls every second until stopped; `stop` returns what it saw once its last poll is done. */
function watchShards(
  shardDbs: readonly Database[],
  topic: string,
  apiBaseUrl: string,
  headers: Record<string, string>,
): { stop(): Promise<WatchPoint[]> } {
  const points: WatchPoint[] = [];
  let stopped = false;
  const stored = (db: Database): Promise<number | undefined> =>
    readCommittedRecords(db, topic).then(
      (records) => records.get(writerGroupId) ?? 0,
      () => undefined,
    );
  // Every probe host's newest step: one series a partition, each on its partition's shard.
  const query = `count(max_over_time(${failoverSeqMetric}[2h]))`;
  const read = async (partial: boolean): Promise<ObservedRead> => {
    const url = new URL('/prometheus/api/v1/query', apiBaseUrl);
    url.search = new URLSearchParams({
      query,
      ...(partial ? { partial_response: 'true' } : {}),
    }).toString();
    try {
      const response = await fetch(url, { headers, signal: AbortSignal.timeout(5_000) });
      const body = (await response.json()) as { errorType?: string; warnings?: string[] };
      return {
        status: response.status,
        ...(body.errorType === undefined ? {} : { errorType: body.errorType }),
        warned: (body.warnings ?? []).length > 0,
      };
    } catch {
      return { status: 'no answer', warned: false };
    }
  };
  const loop = (async () => {
    while (!stopped) {
      const atMs = performance.now();
      const [records, strict, partial] = await Promise.all([
        Promise.all(shardDbs.map(stored)),
        read(false),
        read(true),
      ]);
      points.push({ atMs, records, strict, partial });
      await sleep(Math.max(0, atMs + 1_000 - performance.now()));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      return points;
    },
  };
}

/**
 * Each shard's stored records per second over the baseline and while s1 was away: the rise of
 * its stored offsets between the first and last points of the window that it answered.
 */
function recordRates(
  points: readonly WatchPoint[],
  shardCount: number,
  window: { baselineFromMs: number; killAtMs: number; awayUntilMs: number },
): ShardFailover['records'] {
  const rate = (shard: number, fromMs: number, toMs: number): number => {
    const seen = points.filter(
      (p) => p.atMs >= fromMs && p.atMs <= toMs && p.records[shard] !== undefined,
    );
    const first = seen[0];
    const last = seen.at(-1);
    if (first === undefined || last === undefined || last.atMs === first.atMs) return 0;
    return (
      (((last.records[shard] ?? 0) - (first.records[shard] ?? 0)) * 1000) / (last.atMs - first.atMs)
    );
  };
  return Array.from({ length: shardCount }, (_, shard) => ({
    shard: `s${shard}`,
    baselinePerSecond: rate(shard, window.baselineFromMs, window.killAtMs),
    whileAwayPerSecond: rate(shard, window.killAtMs, window.awayUntilMs),
  }));
}

/** The reads made while s1 was away: each strict and partial answer. */
function readsWhileAway(
  points: readonly WatchPoint[],
  killAtMs: number,
  awayUntilMs: number,
): ShardFailover['reads'] {
  const away = points.filter((p) => p.atMs >= killAtMs && p.atMs < awayUntilMs);
  return { strict: away.map((p) => p.strict), partial: away.map((p) => p.partial) };
}

/** Probe hosts with samples on a shard other than their partition's (`steps`: each shard's). */
function countMisplaced(
  steps: readonly { host: string }[][],
  hosts: readonly string[],
  shardOf: (partition: number) => number,
): number {
  let misplaced = 0;
  steps.forEach((rows, shard) => {
    const held = new Set(rows.map((row) => row.host));
    misplaced += [...held].filter((host) => shardOf(hosts.indexOf(host)) !== shard).length;
  });
  return misplaced;
}
