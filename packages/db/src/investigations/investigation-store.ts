import type { Alert, InvestigationReport } from '@monitor/schemas';
import type { Fragment } from '@monitor/postgres-driver';
import { alertColumns } from '../alerts/alert-columns.js';
import type { ShardServiceRow } from '../shards/find-shard-service.js';
import { findShardService } from '../shards/find-shard-service.js';
import type { Database, Sql } from '../core/database.js';

/** An investigation this worker holds until `leaseUntil`. */
export type ClaimedInvestigation = {
  id: string;
  orgId: string;
  alertId: string | null;
  serviceId: string;
  title: string;
  /** The incident window (for an alert: started_at..fired_at). */
  windowFrom: Date;
  windowTo: Date;
  /** Counts this claim: the fencing token that `complete` and `fail` check. */
  attempts: number;
  leaseUntil: Date;
};

export type ClaimOptions = {
  /** How long the claim holds before another worker may take the investigation over. */
  leaseMs: number;
  /** A running investigation whose lease expired after this many attempts fails instead. */
  maxAttempts: number;
  /**
   * Wait for the evidence: a queued investigation whose `evidence_positions` the consumer group
   * `storageGroupId` (the writer) has not reached yet is not claimed, for at most `maxWaitMs`
   * after it was opened (then it runs with whatever is stored). Omitted: no wait.
   */
  evidence?: { storageGroupId: string; maxWaitMs: number };
};

export type FailOptions = {
  error: string;
  /** Whether another attempt may succeed (database unreachable, timeout…). */
  retriable: boolean;
  /** A retriable failure is claimable again after this long… */
  retryDelayMs: number;
  /** …unless this many attempts were made: then it fails for good. */
  maxAttempts: number;
};

/** `lost`: the claim no longer holds (lease expired and another worker took over). */
type FailOutcome = 'queued' | 'failed' | 'lost';

type EvidenceRequest = {
  orgId: string;
  serviceId: string;
  /** The alert investigated; null for an on-demand investigation of a time range. */
  alertId: string | null;
  /**
   * Samples and snapshots are read over from..to: the baseline from..incidentFrom (excluded),
   * the incident incidentFrom..to. Each part is thinned on its own (see `EvidenceLimits`), so a
   * long incident does not thin out the baseline it is compared with.
   */
  from: Date;
  incidentFrom: Date;
  to: Date;
  /** The rule's alerts fired from here to `to` are its history (24 h for flapping). */
  historyFrom: Date;
  /** Services sharing the value of any of these tags are peers. */
  peerTagKeys: readonly string[];
  maxPeers: number;
  /**
   * The metrics whose samples are read for every peer, chosen once the host's own evidence is
   * read (on demand only the host's samples single a metric out). Called once.
   */
  choosePeerMetrics(host: {
    alert: Alert | undefined;
    samples: readonly EvidenceSample[];
  }): readonly string[];
  /** Defaults to `defaultEvidenceLimits`. */
  limits?: EvidenceLimits;
};

/**
 * Caps on the evidence of one investigation, whatever the length of its window: the reduction
 * happens in the database, so the raw rows never reach the worker. Each cap is shared between
 * the baseline and the incident in proportion to their lengths, each getting 1/3 to 2/3 of it.
 */
export type EvidenceLimits = {
  /** Points per metric of the investigated host. */
  pointsPerSeries: number;
  /** Points per metric of each peer. */
  peerPointsPerSeries: number;
  snapshots: number;
};

/**
 * 1,500 points a series keep an hour's baseline at 10 s raw; 600 snapshots (≈1.3 KB of JSON each
 * as stored) keep an alert's 75-minute window at 10 s raw. Peers are read for one metric, so
 * their series may be as long as the host's.
 */
export const defaultEvidenceLimits: EvidenceLimits = {
  pointsPerSeries: 1500,
  peerPointsPerSeries: 1500,
  snapshots: 600,
};

/** Bucket widths of the baseline and the incident, in ms: each part gets its share of points. */
export type EvidenceBuckets = { baselineMs: number; incidentMs: number };

/**
 * The widths that cut baseline fromMs..incidentFromMs (excluded) and incident
 * incidentFromMs..toMs into at most `maxPoints` buckets in all, each part getting a share in
 * proportion to its length, clamped to 1/3..2/3 of `maxPoints`. A width is at least 1 ms, so
 * samples farther apart than the width stay apart: a short window is read raw. maxPoints ≥ 2.
 */
export function evidenceBuckets(
  window: { fromMs: number; incidentFromMs: number; toMs: number },
  maxPoints: number,
): EvidenceBuckets {
  const incidentFromMs = Math.min(Math.max(window.incidentFromMs, window.fromMs), window.toMs);
  const baselineSpanMs = incidentFromMs - window.fromMs;
  const incidentSpanMs = window.toMs - incidentFromMs;
  const totalMs = baselineSpanMs + incidentSpanMs;
  const baselineShare = Math.min(
    2 / 3,
    Math.max(1 / 3, totalMs === 0 ? 0.5 : baselineSpanMs / totalMs),
  );
  const baselinePoints = Math.max(1, Math.floor(maxPoints * baselineShare));
  const incidentPoints = Math.max(1, maxPoints - baselinePoints);
  // floor(span / n) + 1 > span / n, so a span (both ends included) holds at most n buckets.
  return {
    baselineMs: Math.floor(baselineSpanMs / baselinePoints) + 1,
    incidentMs: Math.floor(incidentSpanMs / incidentPoints) + 1,
  };
}

type EvidenceService = { id: string; name: string; tags: Record<string, string> };
/**
 * A point of a series: a raw sample, or where the window is thinned the mean of a bucket's
 * samples at the time of its first one (a bucket holding one sample is that sample).
 */
export type EvidenceSample = { time: Date; metric: string; value: number };
/** A snapshot as the agent sent it: arrays of containers and processes, not validated here. */
export type EvidenceSnapshot = { time: Date; containers: unknown[]; processes: unknown[] };

type EvidencePeer = {
  service: EvidenceService;
  /** The peer's samples over from..to of the metrics `choosePeerMetrics` chose. */
  samples: EvidenceSample[];
  /** The peer's alerts active at some moment of from..to. */
  alerts: Alert[];
};

/** Everything stored that an analysis may draw on, in time order within each list. */
export type InvestigationEvidence = {
  service: EvidenceService;
  alert: Alert | undefined;
  samples: EvidenceSample[];
  snapshots: EvidenceSnapshot[];
  /** The alert's rule on this service, fired within historyFrom..to (the alert included). */
  ruleHistory: Alert[];
  peers: EvidencePeer[];
};

export type InvestigationStore = {
  /**
   * Claims the oldest claimable investigation (queued and due, or running with an expired
   * lease), `for update skip locked` so concurrent workers never take the same one: it becomes
   * `running` with attempts + 1 and a fresh lease. Expired leases past maxAttempts are failed
   * first. Undefined when nothing is claimable.
   */
  claim(options: ClaimOptions): Promise<ClaimedInvestigation | undefined>;
  /**
   * Stores the report and marks the investigation completed, only while this claim holds
   * (running, same attempts). False when the claim was lost: nothing is written then.
   */
  complete(claim: ClaimedInvestigation, report: InvestigationReport): Promise<boolean>;
  /**
   * Requeues a retriable failure with a delay, or fails it for good (completed_at then says when
   * it ended); only while the claim holds.
   */
  fail(claim: ClaimedInvestigation, options: FailOptions): Promise<FailOutcome>;
  /**
   * Extends the lease of a claim that still holds (running, same attempts) to now + leaseMs.
   * False when the claim was lost.
   */
  renew(claim: ClaimedInvestigation, leaseMs: number): Promise<boolean>;
  /**
   * Reads the evidence of an investigation, bounded by `request.limits` however long the window
   * (thinned in the database). Throws when the service no longer exists.
   */
  loadEvidence(request: EvidenceRequest): Promise<InvestigationEvidence>;
};

type ClaimDbRow = {
  id: string;
  org_id: string;
  alert_id: string | null;
  service_id: string;
  title: string;
  window_from: Date;
  window_to: Date;
  attempts: number;
  lease_until: Date;
};

/**
 * The investigator's storage. Times come from the database clock, so replicas with skewed clocks
 * agree on when a lease expired. A queued row's lease_until is the earliest time it may be
 * claimed again (the retry delay); null means at once.
 */
export type InvestigationStoreOptions = {
  /**
   * The sample shards (issue 59): where services, samples, snapshots and the writer's offsets
   * are. Unset: `db` holds them.
   */
  shards?: readonly Database[];
};

export function createInvestigationStore(
  db: Database,
  options: InvestigationStoreOptions = {},
): InvestigationStore {
  const { sql } = db;
  const shards = options.shards ?? [db];
  return {
    async claim({ leaseMs, maxAttempts, evidence }) {
      // Where the writer's offsets are: here, or on every shard (each its partitions').
      const storedOffsets =
        options.shards === undefined || evidence === undefined
          ? sql`consumer_offsets`
          : sql`(select * from jsonb_to_recordset(${JSON.stringify(
              await shardOffsets(options.shards, evidence.storageGroupId),
            )}::text::jsonb) as o(group_id text, topic text, partition int, next_offset bigint))`;
      await sql`
        update investigations
        set status = 'failed', lease_until = null, updated_at = now(), completed_at = now(),
          last_error = 'lease expired ' || attempts || ' times: the investigator crashed or stalled'
        where status = 'running' and lease_until <= now() and attempts >= ${maxAttempts}
      `;
      const [row] = await sql<ClaimDbRow[]>`
        update investigations i
        set status = 'running', attempts = i.attempts + 1, updated_at = now(),
          lease_until = now() + ${leaseMs} * interval '1 millisecond'
        from (
          select id from investigations inv
          where status in ('queued', 'running') and coalesce(lease_until, '-infinity') <= now()
            and (
              ${evidence === undefined}::boolean
              or inv.status = 'running'
              or inv.created_at <= now() - ${evidence?.maxWaitMs ?? 0} * interval '1 millisecond'
              or not exists (
                select 1
                from jsonb_to_recordset(inv.evidence_positions)
                  as e(topic text, partition int, next_offset bigint)
                left join ${storedOffsets} stored
                  on stored.group_id = ${evidence?.storageGroupId ?? ''}
                  and stored.topic = e.topic and stored.partition = e.partition
                where coalesce(stored.next_offset, 0) < e.next_offset
              )
            )
          order by created_at, id
          limit 1
          for update skip locked
        ) as due
        where i.id = due.id
        returning i.id, i.org_id, i.alert_id, i.service_id, i.title, i.window_from, i.window_to,
          i.attempts, i.lease_until
      `;
      if (row === undefined) return undefined;
      return {
        id: row.id,
        orgId: row.org_id,
        alertId: row.alert_id,
        serviceId: row.service_id,
        title: row.title,
        windowFrom: row.window_from,
        windowTo: row.window_to,
        attempts: row.attempts,
        leaseUntil: row.lease_until,
      };
    },

    async complete(claim, report) {
      // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
      const rows = await sql`
        update investigations
        set status = 'completed', lease_until = null, last_error = null,
          findings = ${JSON.stringify(report.findings)}::text::jsonb,
          analysis = ${JSON.stringify(report.analysis)}::text::jsonb,
          timeline = ${JSON.stringify(report.timeline)}::text::jsonb,
          recommendations = ${JSON.stringify(report.recommendations)}::text::jsonb,
          updated_at = now(), completed_at = now()
        where id = ${claim.id} and status = 'running' and attempts = ${claim.attempts}
        returning id
      `;
      return rows.length === 1;
    },

    async fail(claim, { error, retriable, retryDelayMs, maxAttempts }) {
      const [row] = await sql<{ status: 'queued' | 'failed' }[]>`
        update investigations
        set status = case when ${retriable}::boolean and attempts < ${maxAttempts}
            then 'queued' else 'failed' end,
          lease_until = case when ${retriable}::boolean and attempts < ${maxAttempts}
            then now() + ${retryDelayMs} * interval '1 millisecond' end,
          completed_at = case when ${retriable}::boolean and attempts < ${maxAttempts}
            then null else now() end,
          last_error = ${error}, updated_at = now()
        where id = ${claim.id} and status = 'running' and attempts = ${claim.attempts}
        returning status
      `;
      return row?.status ?? 'lost';
    },

    async renew(claim, leaseMs) {
      const rows = await sql`
        update investigations
        set lease_until = now() + ${leaseMs} * interval '1 millisecond', updated_at = now()
        where id = ${claim.id} and status = 'running' and attempts = ${claim.attempts}
        returning id
      `;
      return rows.length === 1;
    },

    async loadEvidence(request) {
      const found = await findShardService(
        shards,
        request.orgId,
        request.serviceId,
        options.shards !== undefined,
      );
      if (found === undefined) throw new Error(`service ${request.serviceId} not found`);
      const { service, shard } = found;
      const alert =
        request.alertId === null
          ? undefined
          : (
              await sql<Alert[]>`
                select ${sql.unsafe(alertColumns)} from alerts
                where id = ${request.alertId} and org_id = ${request.orgId}
              `
            )[0];
      const limits = request.limits ?? defaultEvidenceLimits;
      const window = {
        fromMs: request.from.getTime(),
        incidentFromMs: request.incidentFrom.getTime(),
        toMs: request.to.getTime(),
      };
      // The samples of `seriesIds` (an array expression) in the window, their times as
      // timestamptz, through the read function every reader of samples reads.
      const rawSamples = (on: Sql, seriesIds: Fragment) => on`(
        select series_id, timestamptz 'epoch' + time_ms * interval '1 millisecond' as time, value
        from raw_samples(${seriesIds}, ${window.fromMs}::bigint, ${window.toMs}::bigint)
      )`;
      // The bucket a row falls in: baseline and incident are binned from their own starts with
      // their own widths, so no bucket straddles the two.
      const bucketOf = (on: Sql, buckets: EvidenceBuckets) => on`
        case when time < ${request.incidentFrom}
          then date_bin(${buckets.baselineMs}::float8 * interval '1 millisecond', time, ${request.from})
          else date_bin(${buckets.incidentMs}::float8 * interval '1 millisecond', time,
            ${request.incidentFrom})
        end`;
      // avg and the first time: a bucket holding a single sample is that sample, unchanged. A
      // metric with several series (an agent's label sets) is their samples together.
      const samples = await shard.sql<EvidenceSample[]>`
        select min(s.time) as time, r.metric, avg(s.value) as value
        from ${rawSamples(shard.sql, shard.sql`array(select id from series where service_id = ${service.id})`)} s
        join series r on r.id = s.series_id
        group by r.metric, ${bucketOf(shard.sql, evidenceBuckets(window, limits.pointsPerSeries))}
        order by time, r.metric
      `;
      // The last snapshot of each bucket, so the newest (the state at firing) is always kept.
      // Times first, over the (service_id, time) index: only the chosen rows' JSON is read.
      const snapshots = await shard.sql<EvidenceSnapshot[]>`
        select time, containers, processes from snapshots
        where service_id = ${service.id} and time in (
          select max(time) from snapshots
          where service_id = ${service.id} and time >= ${request.from} and time <= ${request.to}
          group by ${bucketOf(shard.sql, evidenceBuckets(window, limits.snapshots))}
        )
        order by time
      `;
      const ruleHistory =
        alert === undefined
          ? []
          : await sql<Alert[]>`
                select ${sql.unsafe(alertColumns)} from alerts
                where org_id = ${request.orgId} and rule_id = ${alert.ruleId}
                  and service_id = ${service.id}
                  and fired_at >= ${request.historyFrom} and fired_at <= ${request.to}
                order by fired_at, id
              `;
      const peerServices = await findPeerServices(
        db,
        shards,
        request,
        service,
        options.shards !== undefined,
      );
      const peerIds = peerServices.map((peer) => peer.id);
      const peerMetrics = peerIds.length === 0 ? [] : request.choosePeerMetrics({ alert, samples });
      // Each shard's peers at once; a peer's samples keep their order (time, metric).
      const peerSamples =
        peerMetrics.length === 0
          ? []
          : (
              await Promise.all(
                shards.map(async (on) => {
                  const ids = peerServices
                    .filter((peer) => peer.shard === on)
                    .map((peer) => peer.id);
                  if (ids.length === 0) return [];
                  return await on.sql<(EvidenceSample & { service_id: string })[]>`
                    select r.service_id, min(s.time) as time, r.metric, avg(s.value) as value
                    from ${rawSamples(
                      on.sql,
                      on.sql`array(select id from series
                        where service_id = any(${ids}::text[])
                          and metric = any(${peerMetrics}::text[]))`,
                    )} s
                    join series r on r.id = s.series_id
                    group by r.service_id, r.metric,
                      ${bucketOf(on.sql, evidenceBuckets(window, limits.peerPointsPerSeries))}
                    order by r.service_id, time, r.metric
                  `;
                }),
              )
            ).flat();
      const peerAlerts =
        peerIds.length === 0
          ? []
          : await sql<Alert[]>`
              select ${sql.unsafe(alertColumns)} from alerts
              where org_id = ${request.orgId} and service_id = any(${peerIds}::text[])
                and fired_at <= ${request.to}
                and (resolved_at is null or resolved_at >= ${request.from})
              order by fired_at, id
            `;
      return {
        service: { id: service.id, name: service.name, tags: service.tags },
        alert,
        samples: samples.map(({ time, metric, value }) => ({ time, metric, value })),
        snapshots: snapshots.map(({ time, containers, processes }) => ({
          time,
          containers: Array.isArray(containers) ? containers : [],
          processes: Array.isArray(processes) ? processes : [],
        })),
        ruleHistory,
        peers: peerServices.map((peer) => ({
          service: { id: peer.id, name: peer.name, tags: peer.tags },
          samples: peerSamples
            .filter((sample) => sample.service_id === peer.id)
            .map(({ time, metric, value }) => ({ time, metric, value })),
          alerts: peerAlerts.filter((a) => a.serviceId === peer.id),
        })),
      };
    },
  };
}

/**
 * The first `maxPeers` by name of the organization's services (on any shard) that share the
 * value of one of `peerTagKeys` with `service`, in `control`'s collation as one database's
 * `order by name` would give them.
 */
async function findPeerServices(
  control: Database,
  shards: readonly Database[],
  request: Pick<EvidenceRequest, 'orgId' | 'peerTagKeys' | 'maxPeers'>,
  service: ShardServiceRow,
  skipCopies: boolean,
): Promise<(ShardServiceRow & { shard: Database })[]> {
  const found = (
    await Promise.all(
      shards.map(async (shard) =>
        (
          await shard.sql<ShardServiceRow[]>`
            select id, name, tags from services
            where org_id = ${request.orgId} and id <> ${service.id}
              ${skipCopies ? shard.sql`and not shard_copy` : shard.sql``}
              and exists (
                select 1 from unnest(${[...request.peerTagKeys]}::text[]) as k(key)
                where tags ->> k.key = ${JSON.stringify(service.tags)}::text::jsonb ->> k.key
              )
            order by name
            limit ${request.maxPeers}`
        ).map((row) => ({ ...row, shard })),
      ),
    )
  ).flat();
  if (shards.length === 1) return found;
  const byName = new Map(found.map((row) => [row.name, row]));
  const names = await control.sql<{ name: string }[]>`
    select name from unnest(${found.map((row) => row.name)}::text[]) as u(name)
    order by name limit ${request.maxPeers}`;
  return names.map(({ name }) => byName.get(name) as ShardServiceRow & { shard: Database });
}

/** The writer's stored offsets on every shard; a partition's highest where two hold it. */
async function shardOffsets(
  shards: readonly Database[],
  groupId: string,
): Promise<{ group_id: string; topic: string; partition: number; next_offset: string }[]> {
  const rows = (
    await Promise.all(
      shards.map(
        ({ sql }) => sql<{ topic: string; partition: number; next_offset: string }[]>`
          select topic, partition, next_offset from consumer_offsets where group_id = ${groupId}`,
      ),
    )
  ).flat();
  const highest = new Map<string, (typeof rows)[number]>();
  for (const row of rows) {
    const key = `${row.topic}\u0000${row.partition}`;
    const kept = highest.get(key);
    if (kept === undefined || BigInt(row.next_offset) > BigInt(kept.next_offset)) {
      highest.set(key, row);
    }
  }
  return [...highest.values()].map((row) => ({ group_id: groupId, ...row }));
}
