import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ruleGroupPartition, ruleGroupSlotMs } from './rule-group-schedule.js';

const group = fc.record({ orgId: fc.string(), namespace: fc.string(), name: fc.string() });
const intervalMs = fc.integer({ min: 1, max: 24 * 3600 * 1000 });
const nowMs = fc.integer({ min: 0, max: 4_000_000_000_000 });

describe('ruleGroupSlotMs', () => {
  it('is the latest slot at or before now, slots one interval apart on a fixed offset', () => {
    fc.assert(
      fc.property(group, intervalMs, nowMs, (g, interval, now) => {
        const slot = ruleGroupSlotMs(g, interval, now);
        expect(slot).toBeLessThanOrEqual(now);
        expect(now - slot).toBeLessThan(interval);
        // Every instant of the same slot gives it; the next slot is one interval on.
        expect(ruleGroupSlotMs(g, interval, slot)).toBe(slot);
        expect(ruleGroupSlotMs(g, interval, slot + interval)).toBe(slot + interval);
        expect(ruleGroupSlotMs(g, interval, slot - 1)).toBe(slot - interval);
      }),
    );
  });

  it('spreads groups of the same interval over it', () => {
    const offsets = new Set(
      Array.from({ length: 100 }, (_, i) =>
        ruleGroupSlotMs({ orgId: 'org', namespace: 'ns', name: `group-${i}` }, 60_000, 0),
      ),
    );
    expect(offsets.size).toBeGreaterThan(90);
  });
});

describe('ruleGroupPartition', () => {
  it('maps a group to one partition, the same on every call, over every partition', () => {
    fc.assert(
      fc.property(group, fc.integer({ min: 1, max: 64 }), (g, partitions) => {
        const partition = ruleGroupPartition(g, partitions);
        expect(partition).toBeGreaterThanOrEqual(0);
        expect(partition).toBeLessThan(partitions);
        expect(ruleGroupPartition({ ...g }, partitions)).toBe(partition);
      }),
    );
    const used = new Set(
      Array.from({ length: 200 }, (_, i) =>
        ruleGroupPartition({ orgId: 'org', namespace: 'ns', name: `g${i}` }, 6),
      ),
    );
    expect(used.size).toBe(6);
  });
});
