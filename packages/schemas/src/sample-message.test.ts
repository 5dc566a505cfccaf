import { describe, expect, it } from 'vitest';
import type { SampleMessage } from './sample-message.js';
import { decodeSampleMessage, encodeSampleMessage, sampleMessageKey } from './sample-message.js';

const message: SampleMessage = {
  v: 1,
  org_id: 'org_01',
  host: 'web-1',
  time_ms: 1_790_000_000_000,
  received_ms: 1_790_000_000_100,
  metrics: { cpu_percent: 50 },
  tags: { env: 'prod' },
  containers: [],
  processes: [{ name: 'node', pid: 1 }],
};

describe('sample message', () => {
  it('round-trips through encode and decode', () => {
    expect(decodeSampleMessage(encodeSampleMessage(message))).toEqual({ ok: true, value: message });
  });

  it('round-trips the series fields, and drops fields it does not know', () => {
    const labelled: SampleMessage = {
      ...message,
      tags_label_series: true,
      stale_metrics: ['up'],
      exemplars: [
        { metric: 'latency', value: 0.25, labels: { trace_id: 'abc' } },
        { metric: 'latency', value: Number.NaN, labels: {} },
      ],
      histograms: {
        latency_seconds: {
          integer: true,
          schema: 0,
          zeroThreshold: 1e-128,
          zeroCount: 1,
          count: 6,
          sum: 4.5,
          positiveSpans: [{ offset: 0, length: 2 }],
          positiveBuckets: [2, 3],
          negativeSpans: [],
          negativeBuckets: [],
          counterResetHint: 'no',
          customValues: [],
        },
      },
    };
    expect(decodeSampleMessage(encodeSampleMessage(labelled))).toEqual({
      ok: true,
      value: labelled,
    });
    const newer = Buffer.from(JSON.stringify({ ...message, summaries: [1] }));
    expect(decodeSampleMessage(newer)).toEqual({ ok: true, value: message });
  });

  it('is keyed by organization and host', () => {
    expect(sampleMessageKey(message)).toBe('org_01:web-1');
  });

  it('refuses a histogram that is not one', () => {
    const broken = Buffer.from(JSON.stringify({ ...message, histograms: { x: 'AQ==' } }));
    expect(decodeSampleMessage(broken)).toMatchObject({ ok: false });
  });

  it('gives a reason for values it cannot decode', () => {
    expect(decodeSampleMessage(null)).toEqual({ ok: false, reason: 'empty message value' });
    expect(decodeSampleMessage(Buffer.from('{nope'))).toEqual({
      ok: false,
      reason: 'message value is not JSON',
    });
    const future = decodeSampleMessage(Buffer.from(JSON.stringify({ ...message, v: 2 })));
    expect(future.ok).toBe(false);
  });
});
