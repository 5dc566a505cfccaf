import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SampleMessage } from './sample-message.js';
import { encodeSampleMessage } from './sample-message.js';
import { encodeBinarySampleMessage } from './binary-sample-message.js';
import { decodeHostSample, decodeSampleRecord } from './decode-sample-record.js';
import { encodeSampleRecord } from './sample-record.js';
import { StringTable } from './string-table.js';
import { sampleMessages } from './testing/sample-message-arbitrary.js';

const message: SampleMessage = {
  v: 1,
  org_id: 'org_1',
  host: 'wéb-1',
  time_ms: 1_790_000_000_000,
  received_ms: 1_790_000_000_005,
  metrics: { cpu_percent: 12.5, 'disk.used': 0, ['__proto__']: 3 },
  tags: { env: 'prod', note: 'quote " and \\ backslash, naïve ☃' },
  containers: [{ name: 'api', image: 'node:20', cpu_percent: 1.5, memory_usage: 10 }],
  processes: [],
};

/** The decoded sample with both snapshot lists parsed, to compare the two encodings' results. */
function decodedBoth(encoded: Buffer) {
  const result = decodeHostSample(encoded);
  if (!result.ok) return result;
  const parsed = (list: unknown) =>
    Array.isArray(list) ? list : JSON.parse((list as { json: string }).json);
  const { tagsLabelSeries, staleMetrics, exemplars, histograms, ...rest } = result.value;
  return {
    ok: true,
    value: {
      ...rest,
      // Absent and undefined alike.
      ...(tagsLabelSeries === undefined ? {} : { tagsLabelSeries }),
      ...(staleMetrics === undefined ? {} : { staleMetrics }),
      ...(exemplars === undefined ? {} : { exemplars }),
      ...(histograms === undefined ? {} : { histograms }),
      containers: parsed(result.value.containers),
      processes: parsed(result.value.processes),
    },
  };
}

describe('binary host sample messages', () => {
  it('decode to what the JSON message of the same sample decodes to', () => {
    const binary = encodeBinarySampleMessage(message);
    expect(binary[0]).toBe(0x01);
    expect(decodedBoth(binary)).toEqual(decodedBoth(encodeSampleMessage(message)));
    const decoded = decodeHostSample(binary);
    // `__proto__` is an own metric, as JSON.parse makes it, not the object's prototype.
    expect(decoded.ok && Object.keys(decoded.value.metrics)).toEqual([
      'cpu_percent',
      'disk.used',
      '__proto__',
    ]);
  });

  const messages = sampleMessages();

  it('round-trip every message as its JSON does, alone and framed with JSON ones', () => {
    fc.assert(
      fc.property(messages, fc.array(messages, { maxLength: 3 }), (one, others) => {
        const binary = encodeBinarySampleMessage(one);
        const json = encodeSampleMessage(one);
        expect(decodedBoth(binary)).toEqual(decodedBoth(json));
        const mixed = [
          binary,
          ...others.map((other, i) =>
            i % 2 === 0 ? encodeSampleMessage(other) : encodeBinarySampleMessage(other),
          ),
        ];
        const record = decodeSampleRecord(encodeSampleRecord(mixed));
        expect(record.ok).toBe(true);
        if (!record.ok) return;
        expect(record.value.map((host) => host.message)).toEqual(mixed);
        expect(record.value.map((host) => decodedBoth(host.message))).toEqual(
          mixed.map((each) => decodedBoth(each)),
        );
      }),
      { numRuns: 300 },
    );
    // 300 runs of up to four messages each: seconds on a loaded machine, not a timing bound.
  }, 60_000);

  it('carry every value bit for bit in either encoding, NaN, ±Inf and −0 included', () => {
    fc.assert(
      fc.property(messages, (one) => {
        for (const encoded of [encodeBinarySampleMessage(one), encodeSampleMessage(one)]) {
          const decoded = decodeHostSample(encoded);
          expect(decoded.ok).toBe(true);
          if (!decoded.ok) return;
          const values = Object.entries(decoded.value.metrics);
          expect(values.map(([name]) => name)).toEqual(Object.keys(one.metrics));
          for (const [name, value] of values)
            expect(Object.is(value, one.metrics[name])).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
    const special = { ...message, metrics: { a: Number.NaN, b: Infinity, c: -Infinity, d: -0 } };
    expect(JSON.parse(encodeSampleMessage(special).toString('utf8'))).toMatchObject({
      metrics: { a: 'NaN', b: '+Inf', c: '-Inf', d: '-0' },
    });
  });

  it('fail with a reason, never a throw, when cut short or run on', () => {
    const binary = encodeBinarySampleMessage(message);
    for (let length = 1; length < binary.length; length++) {
      const result = decodeHostSample(binary.subarray(0, length));
      expect(result).toMatchObject({
        ok: false,
        reason: expect.stringMatching(/^binary sample message /),
      });
    }
    expect(decodeHostSample(Buffer.concat([binary, Buffer.from([0])]))).toEqual({
      ok: false,
      reason: 'binary sample message has 1 bytes past its end',
    });
  });

  it('fail on any byte string, with a reason and without a throw', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (bytes) => {
        const result = decodeHostSample(Buffer.concat([Buffer.from([0x01]), bytes]));
        expect(typeof result.ok).toBe('boolean');
      }),
      { numRuns: 2000 },
    );
  });

  it('are versioned: an unknown version or flag is refused, not guessed at', () => {
    const binary = encodeBinarySampleMessage(message);
    const future = Buffer.from(binary);
    future[1] = 2;
    expect(decodeHostSample(future)).toEqual({
      ok: false,
      reason: 'binary sample message has unknown version 2',
    });
    const flagged = Buffer.from(binary);
    flagged[2] = 0b100;
    expect(decodeHostSample(flagged)).toMatchObject({ ok: false });
  });

  it('are checked as the schema checks the JSON message', () => {
    const refused = (changed: Partial<SampleMessage>) =>
      decodeHostSample(encodeBinarySampleMessage({ ...message, ...changed }));
    expect(refused({ host: '' })).toMatchObject({ ok: false });
    expect(refused({ host: 'h'.repeat(256) })).toMatchObject({ ok: false });
    expect(refused({ org_id: '' })).toMatchObject({ ok: false });
    expect(refused({ time_ms: 1.5 })).toMatchObject({ ok: false });
    const invalidUtf8 = encodeBinarySampleMessage({ ...message, host: 'ab' });
    const at = invalidUtf8.indexOf('ab', 3 + 16 + 2 + 5);
    invalidUtf8[at] = 0xff;
    expect(decodeHostSample(invalidUtf8)).toEqual({
      ok: false,
      reason: 'binary sample message holds a string that is not UTF-8',
    });
  });

  it('fall back to JSON for what does not fit the layout', () => {
    const long = { ...message, tags: { note: 'x'.repeat(70_000) } };
    const encoded = encodeBinarySampleMessage(long);
    expect(encoded.toString('utf8')).toBe(JSON.stringify(long));
    expect(decodedBoth(encoded)).toEqual(decodedBoth(encodeSampleMessage(long)));
  });
});

describe('StringTable', () => {
  it('wants a power-of-two table', () => {
    expect(() => new StringTable(1000)).toThrow(RangeError);
  });
});
