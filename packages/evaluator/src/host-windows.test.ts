import { describe, expect, it } from 'vitest';
import { buildLiveRule } from './testing/live-rule.js';
import { at, batch, ctx, harness } from './testing/evaluator-harness.js';

/**
 * A host's marks as they are checkpointed and read back.
 */
describe('marksToJson and parseMarks', () => {
  it('keeps the watermarks across a restart: an older sample still moves nothing', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 0 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 5, cpu: 10 }), ctx);
    expect(JSON.parse(h.watermarks.get('org_1/web-1')!)).toEqual({
      v: 1,
      groups: [['cpu_percent', '', at(5), 0]],
    });
    await h.newEvaluator().handleBatch(batch(1, { host: 'web-1', minutes: 3, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await h.newEvaluator().handleBatch(batch(2, { host: 'web-1', minutes: 6, cpu: 95 }), ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(6), firedMs: at(6) }]);
  });
});
