import { describe, expect, it } from 'vitest';
import { buildLiveRule } from './testing/live-rule.js';
import { topic, record, packed, batch, ctx, harness } from './testing/evaluator-harness.js';

/**
 * Records as the gateway writes them: single-host and many-host records alike, undecodable
 * ones counted and passed over.
 */
describe('decodeSamples', () => {
  it('skips and counts undecodable records and still advances the offset past them', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    await h.evaluator.handleBatch(
      batch(0, null, { host: 'web-1', minutes: 0, cpu: 95 }, null),
      ctx,
    );
    expect(h.counters.undecodable).toBe(2);
    expect(h.offsets.get(0)).toBe(3);
    expect(h.alerts).toHaveLength(1);
  });

  it('evaluates old single-host records and new many-host records of one batch alike', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const old = record(0, { host: 'web-1', minutes: 0, cpu: 95 });
    const many = packed(1, [
      { host: 'web-2', minutes: 0, cpu: 95 },
      { host: 'web-3', minutes: 0, cpu: 50 },
      { host: 'web-2', minutes: 1, cpu: 10 },
    ]);
    await h.evaluator.handleBatch(
      { topic, partition: 0, records: [old, many], logEndOffset: 2 },
      ctx,
    );
    expect(h.alerts.map((a) => [a.host, a.status])).toEqual([
      ['web-1', 'active'],
      ['web-2', 'resolved'],
    ]);
    expect(h.offsets.get(0)).toBe(2);
    // A replay of either record changes nothing.
    await h.evaluator.handleBatch(
      { topic, partition: 0, records: [old, many], logEndOffset: 2 },
      ctx,
    );
    expect(h.alerts).toHaveLength(2);
    expect(h.counters.replayed).toBe(2);
  });
});
