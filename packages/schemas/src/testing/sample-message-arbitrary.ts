import fc from 'fast-check';
import type { SampleMessage } from '../sample-message.js';
import { nativeHistograms } from './native-histogram-arbitrary.js';

/**
 * Sample messages as the gateway publishes them, with short strings of any code point. The
 * snapshot lists are valid, since the decoders pass them on unread. `keys`: the arbitrary of
 * metric names and tag keys (JSON's schema path drops `__proto__`, so its test leaves it out).
 */
export function sampleMessages(
  keys: fc.Arbitrary<string> = fc.string({ unit: 'binary', maxLength: 12 }),
): fc.Arbitrary<SampleMessage> {
  const text = fc.string({ unit: 'binary', maxLength: 12 });
  const nonEmpty = fc.string({ unit: 'binary', minLength: 1, maxLength: 12 });
  return fc.record({
    v: fc.constant(1 as const),
    org_id: nonEmpty,
    host: nonEmpty,
    time_ms: fc.integer({ min: -(2 ** 45), max: 2 ** 45 }),
    received_ms: fc.integer({ min: 0, max: 2 ** 45 }),
    // Every double: NaN, ±Inf and −0 included (JSON spells those out, binary keeps the bits).
    metrics: fc.dictionary(keys, fc.double()),
    tags: fc.dictionary(keys, text),
    tags_label_series: fc.option(fc.constant(true as const), { nil: undefined }),
    stale_metrics: fc.option(fc.array(text), { nil: undefined }),
    exemplars: fc.option(
      fc.array(fc.record({ metric: text, value: fc.double(), labels: fc.dictionary(keys, text) }), {
        maxLength: 3,
      }),
      { nil: undefined },
    ),
    histograms: fc.option(fc.dictionary(keys, nativeHistograms(), { maxKeys: 2 }), {
      nil: undefined,
    }),
    containers: fc.array(
      fc.record({ name: nonEmpty, cpu_percent: fc.double({ min: 0, max: 100, noNaN: true }) }),
    ),
    processes: fc.array(fc.record({ name: nonEmpty, pid: fc.nat() })),
  });
}
