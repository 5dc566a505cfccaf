import { describe, expect, it } from 'vitest';
import { buildLiveRule } from './testing/live-rule.js';
import { at, batch, ctx, harness } from './testing/evaluator-harness.js';

/**
 * What this process keeps of a partition between batches, and when it stops trusting it:
 * another consumer, a rule change, a reset window, its bound.
 */
describe('createPartitionCaches', () => {
  it('reads the applied position only for a partition whose last batch it did not commit', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 2 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 2, cpu: 95 }), ctx);
    expect(h.calls.positionReads).toEqual([0]);
    expect(h.calls.commits.map((c) => c.fromOffset)).toEqual([0, 1, 2]);
    expect(h.alerts).toMatchObject([{ status: 'active', startedMs: at(0), firedMs: at(2) }]);
  });

  it('drops its cache of a partition another consumer advanced meanwhile', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    const other = h.newEvaluator();
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    // The partition moves to `other`, which sees the window cleared, then moves back.
    await other.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    expect(h.calls.loadHosts).toHaveLength(3);
    expect(JSON.parse(h.states.get('org_1/web-1/rul_cpu')!)).toMatchObject({
      status: 'pending',
      startedMs: at(5),
    });
  });

  it('does not cache a batch evaluated while the rules changed', async () => {
    const cpu = buildLiveRule({ id: 'rul_cpu', durationMinutes: 0 });
    const h = harness([cpu]);
    const commit = h.store.commit.bind(h.store);
    h.store.commit = async (c) => {
      const result = await commit(c);
      h.setRules([cpu]); // a reload lands while the batch commits
      return result;
    };
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    expect(h.calls.loadHosts).toHaveLength(2);
  });

  it('forgets the least recently seen hosts beyond its bound and reloads them when seen again', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })], {
      maxCachedHostsPerPartition: 1,
    });
    await h.evaluator.handleBatch(
      batch(0, { host: 'a', minutes: 0, cpu: 95 }, { host: 'b', minutes: 0, cpu: 95 }),
      ctx,
    );
    await h.evaluator.handleBatch(batch(2, { host: 'a', minutes: 5, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(3, { host: 'a', minutes: 6, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(4, { host: 'b', minutes: 6, cpu: 95 }), ctx);
    expect(h.calls.loadHosts).toEqual([['a', 'b'], ['a'], ['b']]);
    expect(h.alerts.map((a) => [a.host, a.startedMs, a.firedMs])).toEqual([
      ['a', at(0), at(5)],
      ['b', at(0), at(6)],
    ]);
  });

  it('starts a window afresh when its fire finds the rule gone', async () => {
    const cpu = buildLiveRule({ id: 'rul_cpu', durationMinutes: 1 });
    const h = harness([cpu]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    // Disabled through the API (its windows deleted); this replica has not polled yet, so it
    // still evaluates the rule: the fire is refused and nothing of it is stored.
    h.setLiveInDatabase([]);
    h.states.clear();
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    expect(h.states.size).toBe(0);
    // Enabled again, a new generation, polled: the window needs its full duration again.
    h.setRules([{ ...cpu, generation: 1 }]);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 2, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await h.evaluator.handleBatch(batch(3, { host: 'web-1', minutes: 3, cpu: 95 }), ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(2), firedMs: at(3) }]);
  });

  it('leaves alone the windows a replica that knew of a rule change first wrote', async () => {
    // The review's case: threshold 90 → 50 (generation 2) while replica `stale` has not polled.
    const before = buildLiveRule({ id: 'rul_cpu', threshold: 90, generation: 1 });
    const after = { ...before, threshold: 50, generation: 2 };
    const h = harness([before]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 10, cpu: 10 }), ctx);
    const staleRules = h.currentRules();
    let polledYet = false;
    const stale = h.newEvaluator({
      current: () => (polledYet ? h.currentRules() : staleRules),
      poll: () => Promise.resolve(),
      // A replica that missed the change (its check answered before the change committed).
      refresh: () => Promise.resolve(),
    });
    h.restartInDatabase(after, at(10));
    h.setRules([after]);
    // An out-of-order sample: the new generation has evaluated nothing, so it fires.
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 5, cpu: 60 }), ctx);
    expect(h.alerts.filter((a) => a.status === 'active')).toMatchObject([{ firedMs: at(5) }]);
    // The partition moves to the stale replica: under threshold 90 its sample is good, but
    // nothing it decides for the old generation may resolve, store or delete anything.
    await stale.handleBatch(batch(2, { host: 'web-1', minutes: 11, cpu: 60 }), ctx);
    expect(h.states.has('org_1/web-1/rul_cpu')).toBe(true);
    // It polls (and no longer trusts what it cached); the next good sample resolves the alert.
    polledYet = true;
    await stale.handleBatch(batch(3, { host: 'web-1', minutes: 12, cpu: 10 }), ctx);
    expect(h.alerts.map((a) => [a.status, a.firedMs, a.resolvedMs])).toEqual([
      ['resolved', at(5), at(12)],
    ]);
  });
});
