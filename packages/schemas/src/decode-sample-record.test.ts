import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SampleMessage } from './sample-message.js';
import { decodeSampleMessage, encodeSampleMessage } from './sample-message.js';
import {
  createSharedSampleRecordDecoder,
  decodeHostSample,
  decodeSampleRecord,
} from './decode-sample-record.js';
import { encodeSampleRecord } from './sample-record.js';
import { sampleMessages } from './testing/sample-message-arbitrary.js';

const message: SampleMessage = {
  v: 1,
  org_id: 'org_1',
  host: 'web-1',
  time_ms: 1_790_000_000_000,
  received_ms: 1_790_000_000_005,
  metrics: { cpu_percent: 12.5, 'disk.used': 0 },
  tags: { env: 'prod', note: 'quote " and \\ backslash, {brace} [bracket]' },
  containers: [{ name: 'api', image: 'node:20', cpu_percent: 1.5, memory_usage: 10 }],
  processes: [
    { name: 'node "server"', pid: 1, cpu_percent: 2 },
    { name: 'sshd', pid: 2 },
  ],
};

function decode(text: string) {
  return decodeHostSample(Buffer.from(text));
}

describe('decodeHostSample', () => {
  it('passes the snapshot arrays on as the message wrote them', () => {
    const result = decodeHostSample(encodeSampleMessage(message));
    expect(result).toEqual({
      ok: true,
      value: {
        orgId: 'org_1',
        host: 'web-1',
        timeMs: 1_790_000_000_000,
        metrics: message.metrics,
        tags: message.tags,
        containers: { json: JSON.stringify(message.containers) },
        processes: { json: JSON.stringify(message.processes) },
      },
    });
  });

  it('takes keys in any order and whitespace anywhere, and empty arrays as empty', () => {
    const text = ` { "processes" : [ ] ,"containers":[\n{"name":"a"} ],
      "tags": {}, "metrics": {"m": -1e3}, "received_ms": 2, "time_ms": 1, "host": "h",
      "org_id": "o", "v": 1, "extra": {"ignored": [1, "]"]} } `;
    const result = decode(text);
    expect(result.ok && result.value).toEqual({
      orgId: 'o',
      host: 'h',
      timeMs: 1,
      metrics: { m: -1000 },
      tags: {},
      containers: { json: '[\n{"name":"a"} ]' },
      processes: [],
    });
  });

  it('reads the series fields: tags that label the series, and staleness markers', () => {
    const labelled: SampleMessage = {
      ...message,
      tags_label_series: true,
      stale_metrics: ['up', 'load'],
    };
    const result = decodeHostSample(encodeSampleMessage(labelled));
    expect(result.ok && result.value).toMatchObject({
      tagsLabelSeries: true,
      staleMetrics: ['up', 'load'],
    });
    // A message without them (every writer before them) has neither.
    const plain = decodeHostSample(encodeSampleMessage(message));
    expect(plain.ok && plain.value.tagsLabelSeries).toBeUndefined();
    expect(plain.ok && plain.value.staleMetrics).toBeUndefined();
  });

  it.each([
    ['not JSON', 'not json'],
    ['truncated', encodeSampleMessage(message).toString().slice(0, -20)],
    ['an unknown version', JSON.stringify({ ...message, v: 2 })],
    ['an empty host', JSON.stringify({ ...message, host: '' })],
    ['a fractional time', JSON.stringify({ ...message, time_ms: 1.5 })],
    ['an unsafe integer time', JSON.stringify({ ...message, time_ms: 2 ** 60 })],
    ['an infinite metric', JSON.stringify(message).replace('12.5', '1e999')],
    ['a string metric', JSON.stringify({ ...message, metrics: { m: '1' } })],
    ['a numeric tag', JSON.stringify({ ...message, tags: { t: 1 } })],
    ['containers not an array', JSON.stringify({ ...message, containers: {} })],
    ['processes missing', JSON.stringify({ ...message, processes: undefined })],
    ['tags_label_series false', JSON.stringify({ ...message, tags_label_series: false })],
    ['tags_label_series a string', JSON.stringify({ ...message, tags_label_series: 'true' })],
    ['stale_metrics not an array', JSON.stringify({ ...message, stale_metrics: 'up' })],
    ['a stale metric not a string', JSON.stringify({ ...message, stale_metrics: ['up', 1] })],
    ['stale_metrics null', JSON.stringify({ ...message, stale_metrics: null })],
    ['an array', '[1]'],
    ['trailing text', `${JSON.stringify(message)} x`],
    ['nothing before the no-snapshots tail', '{,"containers":[],"processes":[]}'],
    ['a head missing fields before that tail', '{"v":1,"host":"h","containers":[],"processes":[]}'],
  ])('rejects %s with the reason the schema gives', (_what, text) => {
    const result = decode(text);
    expect(result.ok).toBe(false);
    expect(result).toEqual(decodeSampleMessage(Buffer.from(text)));
  });

  it('rejects an empty record value', () => {
    expect(decodeHostSample(null)).toEqual({ ok: false, reason: 'empty message value' });
  });

  it('reads escaped or repeated keys the way JSON.parse does, through the schema', () => {
    const escaped = JSON.stringify(message).replace('"containers"', '"contain\\u0065rs"');
    expect(decode(escaped)).toMatchObject({
      ok: true,
      value: { containers: message.containers },
    });
    const repeated = JSON.stringify(message).replace('{"v":1,', '{"v":1,"processes":[],');
    expect(decode(repeated)).toMatchObject({ ok: true, value: { processes: message.processes } });
    // Repeated before the tail of a message without snapshots: the last (empty) one wins.
    const bare = { ...message, containers: [], processes: [] };
    const repeatedBeforeTail = JSON.stringify(bare).replace(
      '{"v":1,',
      '{"v":1,"containers":[{"name":"x"}],',
    );
    expect(decode(repeatedBeforeTail)).toMatchObject({ ok: true, value: { containers: [] } });
  });
});

describe('decodeHostSample against the schema', () => {
  // zod builds records by assignment, which drops a `__proto__` key: the gateway never sends one.
  const messages = sampleMessages(
    fc.string({ unit: 'binary', maxLength: 12 }).filter((s) => s !== '__proto__'),
  );

  it.each([
    ['with or without snapshots', messages],
    // The usual message, read by its tail (no scan for the lists): forced here, not left to chance.
    ['without snapshots', messages.map((m) => ({ ...m, containers: [], processes: [] }))],
  ])('decodes what the gateway encodes exactly as JSON.parse + zod do, %s', (_what, arbitrary) => {
    fc.assert(
      fc.property(arbitrary, (message) => {
        const encoded = encodeSampleMessage(message);
        const slow = decodeSampleMessage(encoded);
        const fast = decodeHostSample(encoded);
        expect(fast.ok).toBe(slow.ok);
        if (!fast.ok || !slow.ok) return;
        const snapshot = (list: unknown) =>
          Array.isArray(list) ? list : JSON.parse((list as { json: string }).json);
        expect({
          ...fast.value,
          containers: snapshot(fast.value.containers),
          processes: snapshot(fast.value.processes),
        }).toEqual({
          orgId: slow.value.org_id,
          host: slow.value.host,
          timeMs: slow.value.time_ms,
          metrics: slow.value.metrics,
          tags: slow.value.tags,
          ...(slow.value.tags_label_series === undefined
            ? {}
            : { tagsLabelSeries: slow.value.tags_label_series }),
          ...(slow.value.stale_metrics === undefined
            ? {}
            : { staleMetrics: slow.value.stale_metrics }),
          ...(slow.value.exemplars === undefined ? {} : { exemplars: slow.value.exemplars }),
          ...(slow.value.histograms === undefined ? {} : { histograms: slow.value.histograms }),
          containers: slow.value.containers,
          processes: slow.value.processes,
        });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('createSharedSampleRecordDecoder', () => {
  const record = encodeSampleRecord([
    encodeSampleMessage(message),
    encodeSampleMessage({ ...message, host: 'web-2' }),
  ]);

  it('decodes as decodeSampleRecord does', () => {
    const decodeRecord = createSharedSampleRecordDecoder();
    expect(decodeRecord(record)).toEqual(decodeSampleRecord(record));
    expect(decodeRecord(Buffer.from('not a record'))).toEqual(
      decodeSampleRecord(Buffer.from('not a record')),
    );
    expect(decodeRecord(null)).toEqual(decodeSampleRecord(null));
  });

  it('decodes a value once, and another value with the same bytes apart', () => {
    const decodeRecord = createSharedSampleRecordDecoder();
    const first = decodeRecord(record);
    expect(decodeRecord(record)).toBe(first);
    const copy = Buffer.from(record);
    expect(decodeRecord(copy)).not.toBe(first);
    expect(decodeRecord(copy)).toEqual(first);
  });
});
