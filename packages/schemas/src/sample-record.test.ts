import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHostSample, decodeSampleRecord } from './decode-sample-record.js';
import type { SampleMessage } from './sample-message.js';
import { encodeSampleMessage } from './sample-message.js';
import { encodeSampleRecord, sampleRecordBytes, sampleRecordMessages } from './sample-record.js';

function message(host: string, timeMs: number): SampleMessage {
  return {
    v: 1,
    org_id: 'org_1',
    host,
    time_ms: timeMs,
    received_ms: timeMs,
    metrics: { cpu: timeMs % 100 },
    tags: { env: 'prod' },
    containers: [],
    processes: [{ name: 'node', pid: 1 }],
  };
}

const messages = fc.array(
  fc.record({
    v: fc.constant(1 as const),
    org_id: fc.string({ minLength: 1, maxLength: 8 }),
    host: fc.string({ minLength: 1, maxLength: 12 }),
    time_ms: fc.integer({ min: 0, max: 2 ** 45 }),
    received_ms: fc.integer({ min: 0, max: 2 ** 45 }),
    metrics: fc.dictionary(
      fc.string({ maxLength: 6 }).filter((key) => key !== '__proto__'),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
    ),
    tags: fc.dictionary(
      fc.string({ maxLength: 6 }).filter((key) => key !== '__proto__'),
      fc.string({ maxLength: 6 }),
    ),
    containers: fc.constant([] as SampleMessage['containers']),
    processes: fc.array(fc.record({ name: fc.string({ minLength: 1 }), pid: fc.nat() }), {
      maxLength: 2,
    }),
  }),
  { minLength: 1, maxLength: 20 },
);

describe('sample records', () => {
  it('carry every host message, in order, and decode each as its own record would', () => {
    fc.assert(
      fc.property(messages, (list) => {
        const encoded = list.map(encodeSampleMessage);
        const record = encodeSampleRecord(encoded);
        expect(record.length).toBe(
          sampleRecordBytes(
            encoded.length,
            encoded.reduce((sum, each) => sum + each.length, 0),
          ),
        );
        const decoded = decodeSampleRecord(record);
        expect(decoded.ok).toBe(true);
        if (!decoded.ok) return;
        expect(decoded.value.map((host) => host.message)).toEqual(encoded);
        expect(decoded.value.map((host) => host.index)).toEqual(encoded.map((_, i) => i));
        for (const [i, host] of decoded.value.entries()) {
          expect(host.decoded).toEqual(decodeHostSample(encoded[i] ?? null));
          expect(host.decoded.ok && host.decoded.value.host).toBe(list[i]?.host);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps one host message as the single-host format every older reader takes', () => {
    const only = encodeSampleMessage(message('web-1', 1_000));
    expect(encodeSampleRecord([only])).toBe(only);
  });

  it('reads single-host records written before the framed format existed', () => {
    const old = Buffer.from(JSON.stringify(message('web-1', 1_000)));
    const decoded = decodeSampleRecord(old);
    expect(decoded.ok && decoded.value.map((host) => host.decoded)).toEqual([
      decodeHostSample(old),
    ]);
  });

  it('reports a bad host message in its own entry, leaving its neighbours decoded', () => {
    const good = encodeSampleMessage(message('web-1', 1_000));
    const bad = Buffer.from(JSON.stringify({ ...message('web-2', 1_000), v: 9 }));
    const decoded = decodeSampleRecord(encodeSampleRecord([good, bad, good]));
    expect(decoded.ok).toBe(true);
    if (!decoded.ok) return;
    expect(decoded.value.map((host) => host.decoded.ok)).toEqual([true, false, true]);
    expect(decoded.value[1]?.message).toEqual(bad);
  });

  it.each([
    ['an empty value', null],
    ['an unknown format', Buffer.from([0, 7, 0, 0, 0, 1, 0x7b])],
    ['a header alone', Buffer.from([0, 2])],
    ['a frame longer than the record', Buffer.from([0, 2, 0, 0, 0, 9, 0x7b])],
    ['a cut length', Buffer.from([0, 2, 0, 0])],
    ['an empty frame', Buffer.from([0, 2, 0, 0, 0, 0])],
  ])('refuses a record with %s as a whole', (_what, value) => {
    expect(sampleRecordMessages(value).ok).toBe(false);
    expect(decodeSampleRecord(value).ok).toBe(false);
  });
});
