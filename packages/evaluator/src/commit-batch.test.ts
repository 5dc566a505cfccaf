import { describe, expect, it } from 'vitest';
import type { BatchContext } from '@monitor/bus';
import { dependencyUnavailable } from '@monitor/platform';
import { PartitionMovedError } from './commit-batch.js';
import { buildLiveRule } from './testing/live-rule.js';
import { at, batch, ctx, harness } from './testing/evaluator-harness.js';

/**
 * What a batch's commit writes (windows that are not ok, rows deleted or updated), and what
 * happens when it cannot: the partition moved, or the commit failed.
 */
describe('commitBatch', () => {
  it('throws when the stored offset moved during the batch, and skips it when redelivered', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const loser = h.newEvaluator();
    const contested = batch(0, { host: 'web-1', minutes: 0, cpu: 95 });
    const positionRead = h.store.appliedPosition.bind(h.store);
    let raced = false;
    h.store.appliedPosition = async (partition) => {
      const position = await positionRead(partition);
      if (!raced) {
        raced = true;
        // The winner commits the same records between the loser's read and its commit.
        await h.evaluator.handleBatch(contested, ctx);
      }
      return position;
    };
    await expect(loser.handleBatch(contested, ctx)).rejects.toBeInstanceOf(PartitionMovedError);
    await loser.handleBatch(contested, ctx);
    expect(h.alerts).toHaveLength(1);
    expect(h.calls.commits.map((c) => c.fromOffset)).toEqual([0, 0]);
  });

  it('throws before committing when the partition was taken away', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const stale: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => true };
    await expect(
      h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), stale),
    ).rejects.toBeInstanceOf(PartitionMovedError);
    expect(h.calls.commits).toEqual([]);
  });

  it('keeps nothing of a batch whose commit failed, so the redelivery fires exactly once', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 1 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    const firing = batch(1, { host: 'web-1', minutes: 1, cpu: 95 });
    h.failNextCommit(dependencyUnavailable('The database', 1, new Error('connection lost')));
    await expect(h.evaluator.handleBatch(firing, ctx)).rejects.toMatchObject({
      code: 'dependency_unavailable',
    });
    await h.evaluator.handleBatch(firing, ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(0), firedMs: at(1) }]);
  });

  it('stores only windows that are not ok, and deletes the row of a window that is ok again', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-1', minutes: 0, cpu: 95 }, { host: 'web-2', minutes: 0, cpu: 10 }),
      ctx,
    );
    expect([...h.states.keys()]).toEqual(['org_1/web-1/rul_cpu']);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    await h.evaluator.handleBatch(
      batch(3, { host: 'web-1', minutes: 2, cpu: 10 }, { host: 'web-2', minutes: 2, cpu: 10 }),
      ctx,
    );
    expect(h.calls.commits.map((c) => [c.states.map((s) => s.state), c.cleared])).toEqual([
      [[{ v: 2, status: 'pending', lastSampleMs: at(0), startedMs: at(0) }], []],
      [[], [{ orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu' }]],
      [[], []],
    ]);
    expect(h.states.size).toBe(0);
  });

  it('stores a window that leaves an old ok row as an update, not also a delete', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    h.states.set('org_1/web-1/rul_cpu', JSON.stringify({ v: 1, status: 'ok', lastSampleMs: 0 }));
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(h.calls.commits[0]).toMatchObject({
      states: [{ ruleId: 'rul_cpu', state: { status: 'pending' } }],
      cleared: [],
    });
  });
});
