import type { Database } from '../core/database.js';

export type PruneAlertHistoryOptions = {
  now: Date;
  /** Resolved alerts, and finished on-demand investigations, older than this go. */
  retentionDays: number;
  /** Alerts (and on-demand investigations) deleted per statement, so no run holds locks long. */
  batchSize: number;
};

export type PruneAlertHistoryResult = {
  alerts: number;
  notifications: number;
  investigations: number;
};

const dayMs = 86_400_000;

/**
 * Deletes the alert history past its retention: resolved alerts whose `resolved_at` is older
 * than the cutoff with their notifications (attempts cascade) and investigations, and
 * on-demand investigations completed or failed before the cutoff. Active alerts and
 * investigations still in work are never touched. One batch per call, each in its own
 * transaction; call again while it returns a full batch. Safe to run from several processes.
 */
export async function pruneAlertHistory(
  db: Database,
  options: PruneAlertHistoryOptions,
): Promise<PruneAlertHistoryResult> {
  const cutoff = new Date(options.now.getTime() - options.retentionDays * dayMs);
  return await db.sql.begin(async (tx) => {
    // `skip locked`: an alert another process is pruning (or a late resolve is touching) waits
    // for the next run.
    const alerts = await tx<{ id: string }[]>`
      delete from alerts
      where id in (
        select id from alerts
        where status = 'resolved' and resolved_at < ${cutoff}
        order by resolved_at
        limit ${options.batchSize}
        for update skip locked
      )
      returning id
    `;
    const alertIds = alerts.map((alert) => alert.id);
    const notifications =
      alertIds.length === 0
        ? { count: 0 }
        : await tx`delete from notifications where alert_id = any(${alertIds}::text[])`;
    const alertInvestigations =
      alertIds.length === 0
        ? { count: 0 }
        : await tx`delete from investigations where alert_id = any(${alertIds}::text[])`;
    const onDemand = await tx`
      delete from investigations
      where id in (
        select id from investigations
        where alert_id is null and status in ('completed', 'failed') and completed_at < ${cutoff}
        order by completed_at
        limit ${options.batchSize}
        for update skip locked
      )
    `;
    return {
      alerts: alertIds.length,
      notifications: notifications.count,
      investigations: alertInvestigations.count + onDemand.count,
    };
  });
}

export type PruneIdleWatermarksOptions = {
  now: Date;
  /** The ingest's raw retention: no sample older than this is accepted. */
  rawRetentionDays: number;
  batchSize: number;
};

/**
 * Deletes the evaluator's watermarks of hosts silent for longer than the raw retention and a
 * day: the gateway accepts no sample older than the retention (nor more than minutes ahead),
 * so any sample such a host sends later is newer than every mark the row held, and evaluating
 * it without the row is what the row would have said. Keeps hosts that come and go (autoscaled
 * fleets) from growing the table forever. Returns how many rows went (at most a batch).
 */
export async function pruneIdleWatermarks(
  db: Database,
  options: PruneIdleWatermarksOptions,
): Promise<number> {
  const cutoff = new Date(options.now.getTime() - (options.rawRetentionDays + 1) * dayMs);
  const deleted = await db.sql`
    delete from evaluator_watermarks
    where (org_id, host) in (
      select org_id, host from evaluator_watermarks
      where updated_at < ${cutoff}
      limit ${options.batchSize}
      for update skip locked
    )
  `;
  return deleted.count;
}
