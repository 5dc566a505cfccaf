import type { StreamPosition } from '../alerts/alert-transitions.js';
import { fireAlert, resolveAlerts, settleAlert } from '../alerts/alert-transitions.js';
import type { Database, Queryable, TransactionSql } from '../core/database.js';
import type { OffsetOwner } from '../samples/sample-store.js';
import type { ServiceIdentities, ServiceIdentity } from '../shards/service-identities.js';
import { transactionCommittingLast } from '../core/transaction-committing-last.js';

/** One (rule, host) window of the evaluator. */
export type EvaluatorStateKey = { orgId: string; host: string; ruleId: string };

/** A window's state as the evaluator checkpoints it: plain JSON data, opaque to storage. */
export type EvaluatorStateRecord = EvaluatorStateKey & { state: unknown };

/**
 * What the evaluator checkpoints per host besides its windows: how far each group of its rules
 * evaluated (see migration 12). Plain JSON data, opaque to storage.
 */
export type HostWatermarkRecord = Pick<EvaluatorStateKey, 'orgId' | 'host'> & { marks: unknown };

/** What is stored of a set of hosts. */
export type StoredHosts = {
  states: EvaluatorStateRecord[];
  watermarks: HostWatermarkRecord[];
};

/**
 * A transition the evaluator decided; times are sample times, epoch milliseconds. `flapping`:
 * the (rule, host) is flapping at that change, so the alert is marked flapping and the change is
 * not notified (held). `settle`: a flapping (rule, host) became stable; its alert (the active
 * one when `firing`, else the latest) is unmarked and one `settled` message goes out.
 */
export type AlertEvent =
  | (EvaluatorStateKey & {
      type: 'fire';
      value: number;
      startedMs: number;
      firedMs: number;
      flapping?: true;
    })
  | (EvaluatorStateKey & { type: 'resolve'; resolvedMs: number; flapping?: true })
  | (EvaluatorStateKey & { type: 'settle'; settledMs: number; firing: boolean });

/**
 * A metric of a host that some live rule watches for silence (no_data_minutes), as one batch
 * took it: its last-seen time becomes the commit's `seenAtMs`, and the host's active no-data
 * alerts of `ruleIds` resolve (a sample of the metric ends the silence).
 */
export type SeenMetric = {
  orgId: string;
  host: string;
  metric: string;
  /** The host's tags on its newest sample of the batch (rule scopes are checked against them). */
  tags: Readonly<Record<string, string>>;
  /** The newest sample time of the metric in the batch: when a no-data alert resolves. */
  sampleMs: number;
  /** The live rules of the metric with no-data on. */
  ruleIds: readonly string[];
};

/** A rule with no-data on, as the sweep applies it. */
type NoDataRule = {
  orgId: string;
  ruleId: string;
  metric: string;
  scope: Readonly<Record<string, string>>;
  noDataMinutes: number;
  noDataState: 'alerting' | 'ok' | 'keep';
  /** The generation evaluated (see LiveRule): a rule changed meanwhile is left alone. */
  generation: number;
};

type NoDataSweep = {
  /** The evaluator's clock now (wall clock), epoch milliseconds. */
  nowMs: number;
  rules: readonly NoDataRule[];
  /**
   * How long after a host's last sample its last-seen time may lag (the evaluator refreshes it
   * at most this often): a silence counts from its stored time plus this. Default 0.
   */
  graceMs?: number;
};

export type NoDataSweepResult = {
  /** No-data alerts created. */
  fired: number;
  /** Active alerts resolved by `no_data_state` ok. */
  resolved: number;
};

/** Where a partition stands: the next offset, and the revision of its windows (migration 18). */
type AppliedPosition = { nextOffset: number; revision: number };

export type EvaluatorCommit = {
  partition: number;
  /**
   * The windows' revision `appliedPosition` reported when the batch began: the commit applies
   * only while it is still the stored one (a no-data sweep reset a window meanwhile otherwise).
   * Unchecked when absent.
   */
  fromRevision?: number;
  /** Metrics watched for silence that the batch took, last seen at `seenAtMs`. */
  seen?: readonly SeenMetric[];
  /** The evaluator's clock when it evaluated the batch (wall clock), epoch milliseconds. */
  seenAtMs?: number;
  /** The next offset `appliedOffset` reported when the batch began: the commit applies only while it is still the stored one. */
  fromOffset: number;
  /** One past the batch's last record. */
  nextOffset: number;
  /** Windows that changed in the batch and must be kept (stored only while their rule is live). */
  states: readonly EvaluatorStateRecord[];
  /**
   * Windows whose rows go: the evaluator needs nothing of them any more (deleted only while
   * their rule is at the generation evaluated). Disjoint from `states`.
   */
  cleared: readonly EvaluatorStateKey[];
  /** The watermarks of the batch's hosts, replacing the stored ones. */
  watermarks: readonly HostWatermarkRecord[];
  /** Fire and resolve transitions, in sample order. */
  events: readonly AlertEvent[];
  /**
   * The generation (see LiveRule) each rule of `states`, `cleared` and `events` was evaluated
   * under: what a rule change restarted meanwhile is dropped instead of stored, deleted or fired.
   */
  ruleGenerations: Readonly<Record<string, number>>;
};

export type EvaluatorCommitResult =
  | {
      outcome: 'committed';
      /** Alerts created. */
      fired: number;
      /** Fires that found the (rule, host) alert active already (a replay after a lost checkpoint). */
      alreadyActive: number;
      resolved: number;
      /** Flapping (rule, host)s that settled, each with its one `settled` message queued. */
      settled: number;
      /** Keys whose rule was deleted or disabled meanwhile: their state was deleted, start them afresh. */
      reset: EvaluatorStateKey[];
    }
  /** Another consumer advanced the partition since `fromOffset`: nothing was written. */
  | { outcome: 'offset-moved'; storedOffset: number };

export type EvaluatorStore = {
  /** The partition's stored next offset (0 when none): records below it are already applied. */
  appliedOffset(partition: number): Promise<number>;
  /** The partition's stored next offset and windows' revision (0 and 0 when none). */
  appliedPosition(partition: number): Promise<AppliedPosition>;
  /**
   * For every partition with hosts silent long enough for some rule: in one transaction per
   * partition, under the partition's offset-row lock (serialized with its batch commits and
   * with other replicas' sweeps), acts once per silence of each (rule, host) whose host has sent
   * the rule's metric before and none for `noDataMinutes`: `alerting` fires a `no_data` alert
   * (value null; none when an alert is active already), `ok` resolves the active alert and
   * resets the window, `keep` changes nothing. The silence acted on is stored, so replicas,
   * restarts and rebalances never act on it twice.
   */
  sweepNoData(sweep: NoDataSweep): Promise<NoDataSweepResult>;
  /** Every stored window state and watermark of the (org, host) pairs, whatever their count. */
  loadHosts(hosts: readonly Pick<EvaluatorStateKey, 'orgId' | 'host'>[]): Promise<StoredHosts>;
  /**
   * In one transaction: locks the partition's offset row, checks it still holds `fromOffset`,
   * applies the events through fireAlert / resolveAlerts, stores the states and watermarks,
   * deletes the cleared states and stores the next offset.
   * Throws to have the batch retried (nothing is written then).
   */
  commit(commit: EvaluatorCommit): Promise<EvaluatorCommitResult>;
  /** Deletes the states of rules that are deleted, disabled or gone; returns how many. */
  dropOrphanStates(): Promise<number>;
};

export type EvaluatorStoreOptions = {
  /**
   * Where the services of fired alerts' hosts are, when their samples live on sample shards
   * other than this database (issue 59); unset, this database holds them.
   */
  identities?: ServiceIdentities;
};

export function createEvaluatorStore(
  db: Database,
  owner: OffsetOwner,
  options: EvaluatorStoreOptions = {},
): EvaluatorStore {
  const { sql } = db;
  const identify = identifyServices(options.identities);
  return {
    async appliedOffset(partition) {
      const [row] = await sql<{ next_offset: string }[]>`
        select next_offset from consumer_offsets
        where group_id = ${owner.groupId} and topic = ${owner.topic} and partition = ${partition}
      `;
      return row === undefined ? 0 : Number(row.next_offset);
    },

    async appliedPosition(partition) {
      const [row] = await sql<{ next_offset: string; state_revision: string }[]>`
        select next_offset, state_revision from consumer_offsets
        where group_id = ${owner.groupId} and topic = ${owner.topic} and partition = ${partition}
      `;
      return row === undefined
        ? { nextOffset: 0, revision: 0 }
        : { nextOffset: Number(row.next_offset), revision: Number(row.state_revision) };
    },

    async sweepNoData(sweep) {
      const result = { fired: 0, resolved: 0 };
      if (sweep.rules.length === 0) return result;
      const before = new Date(sweep.nowMs - silenceMs(sweep, sweep.rules));
      const partitions = await sql<{ partition: number }[]>`
        select distinct partition from evaluator_last_seen where seen_at <= ${before}
      `;
      for (const { partition } of partitions) {
        const due = await dueSilences(sql, partition, sweep);
        if (due.length === 0) continue;
        const services = await identify(
          due
            .filter(({ rule }) => rule.noDataState === 'alerting')
            .map(({ rule, host }) => ({ orgId: rule.orgId, host, seenAt: new Date(sweep.nowMs) })),
        );
        const swept = await sql.begin((tx) =>
          sweepPartition(tx, owner, partition, sweep, services),
        );
        result.fired += swept.fired;
        result.resolved += swept.resolved;
      }
      return result;
    },

    async loadHosts(hosts) {
      if (hosts.length === 0) return { states: [], watermarks: [] };
      const orgIds = hosts.map((k) => k.orgId);
      const hostNames = hosts.map((k) => k.host);
      // The primary keys' (org_id, host) prefix serves each pair.
      const [states, watermarks] = await Promise.all([
        sql<{ org_id: string; host: string; rule_id: string; state: unknown }[]>`
          select s.org_id, s.host, s.rule_id, s.state
          from unnest(${orgIds}::text[], ${hostNames}::text[]) as k(org_id, host)
          join evaluator_states s using (org_id, host)
        `,
        sql<{ org_id: string; host: string; marks: unknown }[]>`
          select w.org_id, w.host, w.marks
          from unnest(${orgIds}::text[], ${hostNames}::text[]) as k(org_id, host)
          join evaluator_watermarks w using (org_id, host)
        `,
      ]);
      return {
        states: states.map((row) => ({
          orgId: row.org_id,
          host: row.host,
          ruleId: row.rule_id,
          state: row.state,
        })),
        watermarks: watermarks.map((row) => ({
          orgId: row.org_id,
          host: row.host,
          marks: row.marks,
        })),
      };
    },

    async commit(commit) {
      const services = await identify(
        commit.events.flatMap((event) =>
          event.type === 'fire'
            ? [{ orgId: event.orgId, host: event.host, seenAt: new Date(event.firedMs) }]
            : [],
        ),
      );
      // The writes go out with the COMMIT: every ingest that monitor all answers waits for
      // this commit.
      return await transactionCommittingLast<EvaluatorCommitResult>(sql, async (tx) => {
        const { nextOffset: storedOffset, revision } = await lockOffset(
          tx,
          owner,
          commit.partition,
        );
        if (
          storedOffset !== commit.fromOffset ||
          (commit.fromRevision !== undefined && revision !== commit.fromRevision)
        ) {
          return { result: { outcome: 'offset-moved' as const, storedOffset }, last: [] };
        }
        const result = { fired: 0, alreadyActive: 0, resolved: 0, settled: 0 };
        // Samples end silences first: a no-data alert resolves before the batch's own fires.
        if (commit.seen !== undefined && commit.seen.length > 0) {
          result.resolved += await takeSeen(
            tx,
            commit.partition,
            commit.seen,
            new Date(commit.seenAtMs ?? Date.now()),
          );
        }
        const reset = new Map<string, EvaluatorStateKey>();
        // Rules first, then alerts: the rules API locks in the same order, so the two never
        // deadlock. A rule changed since the batch was evaluated holds the rule-change's result.
        const live = await lockLiveRules(tx, [
          ...new Set(
            [...commit.states, ...commit.events, ...commit.cleared].map((item) => item.ruleId),
          ),
        ]);
        const current = (ruleId: string): boolean =>
          live.get(ruleId) !== undefined && live.get(ruleId) === commit.ruleGenerations[ruleId];
        const evidencePositions = commit.events.some((event) => event.type === 'fire')
          ? await readPositions(tx, owner, commit)
          : [];
        for (const event of commit.events) {
          const key = stateKey(event);
          if (reset.has(key)) continue;
          if (!current(event.ruleId)) {
            reset.set(key, { orgId: event.orgId, host: event.host, ruleId: event.ruleId });
            continue;
          }
          if (event.type === 'resolve') {
            const resolved = await resolveAlerts(
              tx,
              { orgId: event.orgId, ruleId: event.ruleId, host: event.host },
              new Date(event.resolvedMs),
              { flapping: event.flapping === true },
            );
            result.resolved += resolved.length;
            continue;
          }
          if (event.type === 'settle') {
            const { orgId, ruleId, host, firing } = event;
            if ((await settleAlert(tx, { orgId, ruleId, host, firing })) !== undefined) {
              result.settled++;
            }
            continue;
          }
          const fired = await fireAlert(tx, {
            orgId: event.orgId,
            ruleId: event.ruleId,
            host: event.host,
            value: event.value,
            startedAt: new Date(event.startedMs),
            firedAt: new Date(event.firedMs),
            flapping: event.flapping === true,
            evidencePositions,
            service: await services.get(event.orgId, event.host, new Date(event.firedMs)),
          });
          if (fired.outcome === 'fired') result.fired++;
          else if (fired.outcome === 'already-active') result.alreadyActive++;
          else reset.set(key, { orgId: event.orgId, host: event.host, ruleId: event.ruleId });
        }
        const kept: EvaluatorStateRecord[] = [];
        for (const record of commit.states) {
          const key = stateKey(record);
          if (current(record.ruleId) && !reset.has(key)) {
            kept.push(record);
            continue;
          }
          // A state not stored because its rule went away is reset just the same.
          const { orgId, host, ruleId } = record;
          reset.set(key, { orgId, host, ruleId });
        }
        const last = [
          upsertStates(tx, kept),
          // Only rows of the generation evaluated: a row of a rule restarted meanwhile belongs to
          // its new generation (the restart deleted the old ones), written by a replica that
          // already knew it; rows of removed rules go with dropOrphanStates.
          deleteStates(
            tx,
            commit.cleared.filter((key) => current(key.ruleId)),
          ),
          upsertWatermarks(tx, commit.watermarks),
          storeOffset(tx, owner, commit),
        ];
        return {
          result: { outcome: 'committed' as const, ...result, reset: [...reset.values()] },
          last,
        };
      });
    },

    async dropOrphanStates() {
      const deleted = await sql`
        delete from evaluator_states s
        where not exists (
          select 1 from alert_rules r
          where r.id = s.rule_id and r.org_id = s.org_id and r.enabled and r.deleted_at is null
        )
      `;
      return deleted.count;
    },
  };
}

function stateKey(key: EvaluatorStateKey): string {
  return `${key.orgId}\u0000${key.host}\u0000${key.ruleId}`;
}

/**
 * Every partition's position of this consumer group, with this batch's partition at the end of
 * the batch: what the evaluators had read when the batch's alerts fired.
 */
async function readPositions(
  tx: TransactionSql,
  owner: OffsetOwner,
  commit: Pick<EvaluatorCommit, 'partition' | 'nextOffset'>,
): Promise<StreamPosition[]> {
  const rows = await tx<{ partition: number; next_offset: string }[]>`
    select partition, next_offset from consumer_offsets
    where group_id = ${owner.groupId} and topic = ${owner.topic}
  `;
  const positions = rows
    .filter((row) => row.partition !== commit.partition)
    .map((row) => ({
      topic: owner.topic,
      partition: row.partition,
      nextOffset: Number(row.next_offset),
    }));
  positions.push({
    topic: owner.topic,
    partition: commit.partition,
    nextOffset: commit.nextOffset,
  });
  return positions;
}

/**
 * The partition's stored next offset, its row locked `for update` until commit: a second
 * evaluator that briefly owns the same partition during a rebalance waits here, then sees the
 * offset moved past its batch and writes nothing.
 */
async function lockOffset(tx: TransactionSql, owner: OffsetOwner, partition: number) {
  // Both go out together: the select runs after the insert, on the same connection.
  const [, [row]] = await Promise.all([
    tx`
      insert into consumer_offsets (group_id, topic, partition, next_offset)
      values (${owner.groupId}, ${owner.topic}, ${partition}, 0)
      on conflict (group_id, topic, partition) do nothing
    `,
    tx<{ next_offset: string; state_revision: string }[]>`
      select next_offset, state_revision from consumer_offsets
      where group_id = ${owner.groupId} and topic = ${owner.topic} and partition = ${partition}
      for update
    `,
  ]);
  if (row === undefined) throw new Error('lockOffset: offset row vanished');
  return { nextOffset: Number(row.next_offset), revision: Number(row.state_revision) };
}

/** Moves the partition's stored offset past the committed batch. */
async function storeOffset(
  tx: TransactionSql,
  owner: OffsetOwner,
  commit: Pick<EvaluatorCommit, 'partition' | 'nextOffset'>,
): Promise<void> {
  await tx`
    update consumer_offsets set next_offset = ${commit.nextOffset}
    where group_id = ${owner.groupId} and topic = ${owner.topic}
      and partition = ${commit.partition}
  `;
}

/**
 * Stores when the batch's watched metrics were last seen (`seenAt`, the evaluator's clock) and
 * resolves their hosts' active no-data alerts at the sample's time. Returns how many resolved.
 */
async function takeSeen(
  tx: TransactionSql,
  partition: number,
  seen: readonly SeenMetric[],
  seenAt: Date,
): Promise<number> {
  const input = JSON.stringify(
    seen.map((s) => ({ org_id: s.orgId, host: s.host, metric: s.metric, tags: s.tags })),
  );
  await tx`
    insert into evaluator_last_seen as l (org_id, host, metric, partition, tags, seen_at)
    select org_id, host, metric, ${partition}, tags, ${seenAt}
    from jsonb_to_recordset(${input}::text::jsonb) as s(
      org_id text, host text, metric text, tags jsonb
    )
    order by org_id, host, metric
    on conflict (org_id, host, metric) do update
      set partition = excluded.partition, tags = excluded.tags,
        seen_at = greatest(l.seen_at, excluded.seen_at)
  `;
  // The active no-data alerts of the batch's hosts (a partial index holds only those), then
  // those of a rule whose metric the host sent.
  const hosts = [...new Map(seen.map((s) => [stateKey({ ...s, ruleId: '' }), s])).values()];
  const active = await tx<{ org_id: string; host: string; rule_id: string }[]>`
    select a.org_id, a.host, a.rule_id from alerts a
    join unnest(${hosts.map((h) => h.orgId)}::text[], ${hosts.map((h) => h.host)}::text[])
      as k(org_id, host) on a.org_id = k.org_id and a.host = k.host
    where a.status = 'active' and a.reason = 'no_data'
  `;
  let resolved = 0;
  for (const row of active) {
    const sample = seen.find(
      (s) => s.orgId === row.org_id && s.host === row.host && s.ruleIds.includes(row.rule_id),
    );
    if (sample === undefined) continue;
    const done = await resolveAlerts(
      tx,
      { orgId: sample.orgId, ruleId: row.rule_id, host: sample.host, reason: 'no_data' },
      new Date(sample.sampleMs),
    );
    resolved += done.length;
  }
  return resolved;
}

/** The shortest silence, stored times lagging included, after which one of `rules` acts. */
function silenceMs(sweep: NoDataSweep, rules: readonly NoDataRule[]): number {
  return Math.min(...rules.map((rule) => rule.noDataMinutes)) * 60_000 + (sweep.graceMs ?? 0);
}

/**
 * The (rule, host) silences of a partition due now and not acted on yet. Read without a lock
 * first (a partition with nothing new is not locked at all, however many long-silent hosts it
 * keeps), then again under the offset-row lock before acting.
 */
async function dueSilences(
  q: Queryable,
  partition: number,
  sweep: NoDataSweep,
): Promise<{ rule: NoDataRule; host: string; seenAt: Date }[]> {
  const rows = await q<
    { org_id: string; host: string; metric: string; tags: Record<string, string>; seen_at: Date }[]
  >`
    select org_id, host, metric, tags, seen_at from evaluator_last_seen
    where partition = ${partition} and seen_at <= ${new Date(sweep.nowMs - silenceMs(sweep, sweep.rules))}
    order by org_id, host, metric
  `;
  const due: { rule: NoDataRule; host: string; seenAt: Date }[] = [];
  for (const row of rows) {
    for (const rule of sweep.rules) {
      if (rule.orgId !== row.org_id || rule.metric !== row.metric) continue;
      if (row.seen_at.getTime() > sweep.nowMs - silenceMs(sweep, [rule])) continue;
      if (!Object.entries(rule.scope).every(([key, value]) => row.tags[key] === value)) continue;
      due.push({ rule, host: row.host, seenAt: row.seen_at });
    }
  }
  if (due.length === 0) return due;
  const acted = await q<{ org_id: string; rule_id: string; host: string; silent_since: Date }[]>`
    select n.org_id, n.rule_id, n.host, n.silent_since from evaluator_no_data n
    join unnest(${due.map((d) => d.rule.orgId)}::text[], ${due.map((d) => d.rule.ruleId)}::text[],
      ${due.map((d) => d.host)}::text[]) as k(org_id, rule_id, host)
      on n.org_id = k.org_id and n.rule_id = k.rule_id and n.host = k.host
  `;
  const actedOn = new Map(
    acted.map((row) => [
      stateKey({ orgId: row.org_id, host: row.host, ruleId: row.rule_id }),
      row.silent_since.getTime(),
    ]),
  );
  return due.filter(
    ({ rule, host, seenAt }) =>
      (actedOn.get(stateKey({ orgId: rule.orgId, host, ruleId: rule.ruleId })) ?? -Infinity) <
      seenAt.getTime(),
  );
}

/** One partition's sweep (see EvaluatorStore.sweepNoData), inside the caller's transaction. */
async function sweepPartition(
  tx: TransactionSql,
  owner: OffsetOwner,
  partition: number,
  sweep: NoDataSweep,
  services: IdentifiedServices,
): Promise<NoDataSweepResult> {
  const result = { fired: 0, resolved: 0 };
  // Serializes with the partition's batch commits (a sample taken meanwhile is seen below) and
  // with every other replica's sweep of it.
  await lockOffset(tx, owner, partition);
  const fresh = await dueSilences(tx, partition, sweep);
  if (fresh.length === 0) return result;
  const live = await lockLiveRules(tx, [...new Set(fresh.map(({ rule }) => rule.ruleId))]);
  const now = new Date(sweep.nowMs);
  let windowsReset = false;
  for (const { rule, host, seenAt } of fresh) {
    if (live.get(rule.ruleId) !== rule.generation) continue;
    const key = { orgId: rule.orgId, host, ruleId: rule.ruleId };
    if (rule.noDataState === 'alerting') {
      const fired = await fireAlert(tx, {
        ...key,
        value: null,
        reason: 'no_data',
        startedAt: seenAt,
        firedAt: now,
        service: await services.get(rule.orgId, host, now),
      });
      if (fired.outcome === 'fired') result.fired++;
    } else if (rule.noDataState === 'ok') {
      const resolved = await resolveAlerts(tx, key, now);
      if (resolved.length > 0) {
        // Its window would still be firing: it starts afresh when samples come back.
        await deleteStates(tx, [key]);
        windowsReset = true;
        result.resolved += resolved.length;
      }
    }
    await tx`
      insert into evaluator_no_data (org_id, rule_id, host, silent_since)
      values (${rule.orgId}, ${rule.ruleId}, ${host}, ${seenAt})
      on conflict (org_id, rule_id, host) do update set silent_since = excluded.silent_since
    `;
  }
  if (windowsReset) {
    await tx`
      update consumer_offsets set state_revision = state_revision + 1
      where group_id = ${owner.groupId} and topic = ${owner.topic} and partition = ${partition}
    `;
  }
  return result;
}

/**
 * Which of `ruleIds` are live, their rows locked `for share` (in id order, one lock order for
 * everyone): a concurrent delete or disable waits for this transaction, then its own change is
 * seen by the evaluators' poll, which drops the states written here. Without the lock a state
 * could be stored just after the drop and outlive its rule's incarnation.
 */
/** Locks the rules `for share` in id order; the generation of each that is live. */
async function lockLiveRules(tx: TransactionSql, ruleIds: readonly string[]) {
  if (ruleIds.length === 0) return new Map<string, number>();
  const rows = await tx<{ id: string; generation: string; live: boolean }[]>`
    select id, generation, enabled and deleted_at is null as live from alert_rules
    where id = any(${[...ruleIds].sort()}::text[])
    order by id
    for share
  `;
  return new Map(rows.filter((row) => row.live).map((row) => [row.id, Number(row.generation)]));
}

async function upsertStates(tx: TransactionSql, states: readonly EvaluatorStateRecord[]) {
  if (states.length === 0) return;
  const input = JSON.stringify(
    states.map((s) => ({ org_id: s.orgId, host: s.host, rule_id: s.ruleId, state: s.state })),
  );
  // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
  await tx`
    insert into evaluator_states as e (org_id, host, rule_id, state)
    select org_id, host, rule_id, state
    from jsonb_to_recordset(${input}::text::jsonb) as s(
      org_id text, host text, rule_id text, state jsonb
    )
    order by org_id, host, rule_id
    on conflict (org_id, host, rule_id) do update set state = excluded.state, updated_at = now()
  `;
}

async function upsertWatermarks(tx: TransactionSql, watermarks: readonly HostWatermarkRecord[]) {
  if (watermarks.length === 0) return;
  const input = JSON.stringify(
    watermarks.map((w) => ({ org_id: w.orgId, host: w.host, marks: w.marks })),
  );
  await tx`
    insert into evaluator_watermarks as w (org_id, host, marks)
    select org_id, host, marks
    from jsonb_to_recordset(${input}::text::jsonb) as s(org_id text, host text, marks jsonb)
    order by org_id, host
    on conflict (org_id, host) do update set marks = excluded.marks, updated_at = now()
  `;
}

async function deleteStates(tx: TransactionSql, keys: readonly EvaluatorStateKey[]) {
  if (keys.length === 0) return;
  await tx`
    delete from evaluator_states s
    using unnest(${keys.map((k) => k.orgId)}::text[], ${keys.map((k) => k.host)}::text[],
      ${keys.map((k) => k.ruleId)}::text[]) as k(org_id, host, rule_id)
    where s.org_id = k.org_id and s.host = k.host and s.rule_id = k.rule_id
  `;
}

/** The services of hosts as their shards know them; undefined where this database holds them. */
type IdentifiedServices = {
  get(orgId: string, host: string, seenAt: Date): Promise<ServiceIdentity | undefined>;
};

/**
 * Resolves the services of `hosts` before a transaction, so a shard's round trip is no part of
 * it; a host missed there (a silence that came due meanwhile) is resolved when asked for.
 */
function identifyServices(
  identities: ServiceIdentities | undefined,
): (
  hosts: readonly (Pick<EvaluatorStateKey, 'orgId' | 'host'> & { seenAt: Date })[],
) => Promise<IdentifiedServices> {
  if (identities === undefined) {
    return () => Promise.resolve({ get: () => Promise.resolve(undefined) });
  }
  return async (hosts) => {
    const byOrg = new Map<string, Map<string, ServiceIdentity>>();
    const orgs = new Map<string, { host: string; seenAt: Date }[]>();
    for (const { orgId, ...host } of hosts) {
      const named = orgs.get(orgId);
      if (named === undefined) orgs.set(orgId, [host]);
      else named.push(host);
    }
    await Promise.all(
      [...orgs].map(async ([orgId, named]) => {
        byOrg.set(orgId, await identities(orgId, named));
      }),
    );
    return {
      async get(orgId, host, seenAt) {
        const known = byOrg.get(orgId)?.get(host);
        if (known !== undefined) return known;
        const resolved = (await identities(orgId, [{ host, seenAt }])).get(host);
        if (resolved === undefined) throw new Error(`no service for ${host} on its shard`);
        return resolved;
      },
    };
  };
}
