import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { projectionJson } from './projection-json.js';
import type { ServiceSummary } from './sample-batch.js';

/** What the statements read, written the plain way. */
function reference(summaries: readonly ServiceSummary[], ids: readonly string[] | undefined) {
  return JSON.stringify(
    summaries.map((summary, i) => ({
      ...(ids === undefined ? {} : { id: ids[i] }),
      org_id: summary.orgId,
      name: summary.name,
      tags: summary.tags,
      metrics: Object.fromEntries([...summary.metrics].map(([name, m]) => [name, m.value])),
      metric_times: Object.fromEntries([...summary.metrics].map(([name, m]) => [name, m.timeMs])),
      last_seen_ms: summary.lastSeenMs,
    })),
  );
}

const text = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom('__proto__', 'a"b\\c', '\u2028'),
);
const summary: fc.Arbitrary<ServiceSummary> = fc.record({
  orgId: text,
  name: text,
  lastSeenMs: fc.integer({ min: 0, max: 8_640_000_000_000_000 }),
  tags: fc.dictionary(text, text, { maxKeys: 4 }),
  metrics: fc
    .array(
      fc.tuple(
        text,
        fc.record({
          value: fc.double({ noNaN: true, noDefaultInfinity: true }),
          timeMs: fc.integer({ min: 0, max: 8_640_000_000_000_000 }),
        }),
      ),
      { maxLength: 5 },
    )
    .map((entries) => new Map(entries)),
});

describe('projectionJson', () => {
  it('reads back as the plain JSON.stringify of the same summaries, with and without ids', () => {
    fc.assert(
      fc.property(fc.array(summary, { maxLength: 6 }), fc.boolean(), (summaries, withIds) => {
        const ids = withIds ? summaries.map((_, i) => `svc_${i}`) : undefined;
        let next = 0;
        const json = projectionJson(
          summaries,
          ids === undefined ? undefined : () => ids[next++] ?? '',
        );
        expect(JSON.parse(json)).toEqual(JSON.parse(reference(summaries, ids)));
      }),
      { numRuns: 300 },
    );
  });

  it('is an empty array for no services', () => {
    expect(projectionJson([], undefined)).toBe('[]');
  });
});
