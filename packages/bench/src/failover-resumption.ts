import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { createDatabase } from '@monitor/db';
import { commitWriteProbe, readCommittedRecords } from '@monitor/db/bench';

/** When storage came back after the primary's kill, as the promoted node itself saw it. */
export type StorageResumption = {
  /** The node that first committed a write. */
  node: string;
  /** When it did (ms on the run's monotonic clock). */
  acceptedAtMs: number;
  /**
   * When the writer's first batch after that was committed there: its stored offsets (written in
   * the batch's transaction) had moved on. Undefined: not before the deadline.
   */
  firstStoredAtMs: number | undefined;
};

/**
 * Polls each of `nodes` (the survivors, straight, not through the roles' several-host URL)
 * every `pollMs` until one commits a write, then that one until `groupId`'s stored offsets of
 * `topic` move past where they stood while it was still a standby (nothing can be stored on a
 * standby, so the first batch stored after its promotion is the first move). Gives up at
 * `deadlineMs` (monotonic clock): undefined when no node accepted a write by then.
 */
export async function watchStorageResumption(
  nodes: readonly { name: string; url: string }[],
  watched: { topic: string; groupId: string },
  deadlineMs: number,
  pollMs = 20,
): Promise<StorageResumption | undefined> {
  const pools = nodes.map((node) => ({
    node,
    db: createDatabase({
      url: node.url,
      maxConnections: 1,
      connectTimeoutSeconds: 2,
      applicationName: 'monitor-bench-probe',
    }),
  }));
  const stored = async (db: (typeof pools)[number]['db']): Promise<number | undefined> =>
    (await readCommittedRecords(db, watched.topic).catch(() => undefined))?.get(watched.groupId);
  try {
    const before = new Map<string, number>();
    let accepted: { node: string; db: (typeof pools)[number]['db']; atMs: number } | undefined;
    while (accepted === undefined && performance.now() < deadlineMs) {
      for (const { node, db } of pools) {
        // Read first: a standby's stored offsets are the old primary's last ones, replicated.
        const standing = await stored(db);
        if (standing !== undefined) before.set(node.name, standing);
        const ok = await commitWriteProbe(db).then(
          () => true,
          () => false,
        );
        if (ok) {
          accepted = { node: node.name, db, atMs: performance.now() };
          break;
        }
      }
      if (accepted === undefined) await sleep(pollMs);
    }
    if (accepted === undefined) return undefined;
    const baseline = before.get(accepted.node) ?? (await stored(accepted.db)) ?? 0;
    while (performance.now() < deadlineMs) {
      if (((await stored(accepted.db)) ?? 0) > baseline) {
        return {
          node: accepted.node,
          acceptedAtMs: accepted.atMs,
          firstStoredAtMs: performance.now(),
        };
      }
      await sleep(pollMs);
    }
    return { node: accepted.node, acceptedAtMs: accepted.atMs, firstStoredAtMs: undefined };
  } finally {
    await Promise.all(pools.map(({ db }) => db.close({ timeoutSeconds: 1 })));
  }
}
