import { describe, expect, it } from 'vitest';
import { buildLiveRule } from './testing/live-rule.js';
import { at, batch, ctx, ruleSnapshot, harness } from './testing/evaluator-harness.js';

/**
 * A batch evaluated against its partition's stored position: what is fresh, what is a replay,
 * a new log, a position another consumer moved, rules behind a checkpoint.
 */
describe('createBatchEvaluator', () => {
  it('evaluates a batch and commits states, alerts and the next offset in one call', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 2 })]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: 95 },
        { host: 'web-2', minutes: 0, cpu: 10 },
        { host: 'web-1', minutes: 1, cpu: 96 },
        { host: 'web-1', minutes: 2, cpu: 97 },
        { host: 'web-1', minutes: 3, cpu: 10 },
      ),
      ctx,
    );
    expect(h.calls.loadHosts).toEqual([['web-1', 'web-2']]);
    expect(h.calls.commits).toHaveLength(1);
    expect(h.calls.commits[0]).toMatchObject({
      partition: 0,
      fromOffset: 0,
      nextOffset: 5,
      states: [],
      cleared: [{ orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu' }],
    });
    expect(h.calls.commits[0]!.events).toEqual([
      {
        orgId: 'org_1',
        host: 'web-1',
        ruleId: 'rul_cpu',
        type: 'fire',
        startedMs: at(0),
        firedMs: at(2),
        value: 97,
      },
      { orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu', type: 'resolve', resolvedMs: at(3) },
    ]);
    expect(h.states.size).toBe(0);
    expect(h.counters).toMatchObject({ evaluated: 5, fired: 1, resolved: 1 });
  });

  it('skips records below the stored offset, and a batch entirely below it costs one read', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const first = batch(
      0,
      { host: 'web-1', minutes: 0, cpu: 95 },
      { host: 'web-1', minutes: 1, cpu: 10 },
    );
    await h.evaluator.handleBatch(first, ctx);
    await h.newEvaluator().handleBatch(first, ctx);
    expect(h.calls.commits).toHaveLength(1);
    expect(h.calls.loadHosts).toHaveLength(1);
    expect(h.counters.replayed).toBe(2);

    // Overlapping redelivery: only the record at offset 2 is new.
    await h.evaluator.handleBatch(
      batch(1, { host: 'web-1', minutes: 1, cpu: 10 }, { host: 'web-1', minutes: 2, cpu: 99 }),
      ctx,
    );
    expect(h.calls.commits[1]).toMatchObject({ fromOffset: 2, nextOffset: 3 });
    expect(h.alerts.map((a) => [a.status, a.firedMs])).toEqual([
      ['resolved', at(0)],
      ['active', at(2)],
    ]);
  });

  it('starts a partition afresh when its stored offset is past the end of the log', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.offsets.set(0, 1_000); // from a log of the topic that was deleted since
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(h.alerts).toHaveLength(1);
    expect(h.counters.logRestarts).toBe(1);
    expect(h.offsets.get(0)).toBe(1);
    // A replay of the new log is a replay again.
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(h.counters.replayed).toBe(1);
  });

  it('evaluates again from the stored position when another consumer moved it past its own', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 2 })]);
    const other = h.newEvaluator();
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    // `other` took the partition for a batch, which it evaluated and committed.
    await other.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    // Redelivered to the first with the next one: its own last commit is stale, its commit from
    // there writes nothing, and the batch is evaluated again from the stored position.
    await h.evaluator.handleBatch(
      batch(1, { host: 'web-1', minutes: 1, cpu: 95 }, null, {
        host: 'web-1',
        minutes: 2,
        cpu: 95,
      }),
      ctx,
    );
    expect(h.calls.commits.map((c) => c.fromOffset)).toEqual([0, 1, 1, 2]);
    // Counted by the attempt that committed, not by the one evaluated from the stale position.
    expect(h.counters.replayed).toBe(1);
    expect(h.counters.undecodable).toBe(1);
    expect(h.alerts).toMatchObject([{ status: 'active', startedMs: at(0), firedMs: at(2) }]);
  });

  it('catches up with the rules before using watermarks written under newer ones', async () => {
    const first = buildLiveRule({ id: 'rul_a', durationMinutes: 0, generation: 1 });
    const added = buildLiveRule({ id: 'rul_b', durationMinutes: 0, generation: 2 });
    const h = harness([first]);
    h.setRules([first, added]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 5, cpu: 10 }), ctx);
    // A replica that has not polled since rul_b was added, until asked to.
    let polled = false;
    const stale = ruleSnapshot([first], 1);
    const lagging = h.newEvaluator({
      current: () => (polled ? h.currentRules() : stale),
      poll: () => {
        polled = true;
        return Promise.resolve();
      },
      refresh: () => Promise.resolve(),
    });
    await lagging.handleBatch(batch(1, { host: 'web-1', minutes: 6, cpu: 10 }), ctx);
    expect(polled).toBe(true);
    // rul_b evaluated minute 6 too: had the lagging replica written its mark under the old
    // rules, rul_b would count as having evaluated nothing and take the older sample.
    await h.newEvaluator().handleBatch(batch(2, { host: 'web-1', minutes: 5.5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
  });
});
