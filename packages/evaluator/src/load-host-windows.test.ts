import { describe, expect, it } from 'vitest';
import { buildLiveRule } from './testing/live-rule.js';
import { at, batch, ctx, harness } from './testing/evaluator-harness.js';

/**
 * Which hosts a batch loads from the store, and what it does with what it loads.
 */
describe('loadHostWindows', () => {
  it('keeps hosts in memory and loads only the ones it does not know, those without windows included', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(
      batch(1, { host: 'web-1', minutes: 5, cpu: 95 }, { host: 'web-2', minutes: 5, cpu: 95 }),
      ctx,
    );
    await h.evaluator.handleBatch(batch(3, { host: 'web-2', minutes: 6, cpu: 95 }), ctx);
    expect(h.calls.loadHosts).toEqual([['web-1'], ['web-2']]);
    expect(h.alerts.map((a) => [a.host, a.startedMs, a.firedMs])).toEqual([
      ['web-1', at(0), at(5)],
    ]);
  });

  it('resumes a checkpointed window in a new evaluator and fires at the right sample', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 3 })]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-1', minutes: 0, cpu: 95 }, { host: 'web-1', minutes: 2, cpu: 95 }),
      ctx,
    );
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(2, { host: 'web-1', minutes: 2.5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await restarted.handleBatch(batch(3, { host: 'web-1', minutes: 3, cpu: 91 }), ctx);
    expect(h.alerts).toMatchObject([
      { status: 'active', startedMs: at(0), firedMs: at(3), value: 91 },
    ]);
  });

  it('drops the rows of unreadable states and watermarks it loads', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    h.states.set('org_1/web-1/rul_cpu', JSON.stringify({ v: 9 }));
    h.watermarks.set('org_1/web-1', JSON.stringify({ v: 1, groups: [['cpu_percent']] }));
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 10 }), ctx);
    expect(h.calls.commits[0]?.cleared).toEqual([
      { orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu' },
    ]);
    expect(h.states.size).toBe(0);
    expect(JSON.parse(h.watermarks.get('org_1/web-1')!)).toEqual({
      v: 1,
      groups: [['cpu_percent', '', at(0), 0]],
    });
  });

  it('loads nothing for an organization without rules', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-9', org: 'org_9', minutes: 0, cpu: 99 }),
      ctx,
    );
    expect(h.calls.loadHosts).toEqual([]);
    expect(h.offsets.get(0)).toBe(1);
  });
});
