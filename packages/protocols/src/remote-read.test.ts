import { compressSync, uncompressSync } from 'snappy';
import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.js';
import { remoteReadTypes } from './proto-types.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import {
  decodeRemoteReadRequest,
  encodeChunkedReadFrames,
  encodeRemoteReadSamples,
} from './remote-read.js';
import { decodeXorChunk } from './xor-chunk.js';

function request(message: Record<string, unknown>): Buffer {
  const type = remoteReadTypes().readRequest;
  return compressSync(Buffer.from(type.encode(type.fromObject(message)).finish()));
}

type Decoded = {
  results: {
    timeseries: {
      labels: { name: string; value: string }[];
      samples: { value: number; timestamp: { toNumber(): number } }[];
    }[];
  }[];
};

/** Splits a stream into its frames, checking each frame's size and checksum. */
function frames(stream: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let at = 0;
  while (at < stream.length) {
    let size = 0;
    let scale = 1;
    for (;;) {
      const byte = stream[at++]!;
      size += (byte & 0x7f) * scale;
      scale *= 128;
      if (byte < 0x80) break;
    }
    const crc = Buffer.from(stream.subarray(at, at + 4)).readUInt32BE(0);
    const message = stream.subarray(at + 4, at + 4 + size);
    expect(message.length).toBe(size);
    expect(crc32c(message)).toBe(crc);
    out.push(message);
    at += 4 + size;
  }
  return out;
}

describe('decodeRemoteReadRequest', () => {
  it('reads queries, matchers and hints, and answers SAMPLES when nothing is asked', () => {
    const decoded = decodeRemoteReadRequest(
      request({
        queries: [
          {
            startTimestampMs: 1_700_000_000_000,
            endTimestampMs: 1_700_000_300_000,
            matchers: [
              { type: 0, name: '__name__', value: 'up' },
              { type: 3, name: 'job', value: 'x.*' },
            ],
            hints: { stepMs: 15_000, func: 'rate', rangeMs: 300_000 },
          },
        ],
      }),
      1 << 20,
    );
    expect(decoded).toEqual({
      responseType: 'samples',
      acceptsSamples: true,
      queries: [
        {
          startMs: 1_700_000_000_000,
          endMs: 1_700_000_300_000,
          matchers: [
            { type: '=', name: '__name__', value: 'up' },
            { type: '!~', name: 'job', value: 'x.*' },
          ],
          hints: { stepMs: 15_000, func: 'rate', rangeMs: 300_000 },
        },
      ],
    });
  });

  it('takes the first supported response type asked for', () => {
    expect(
      decodeRemoteReadRequest(request({ acceptedResponseTypes: [1, 0] }), 1 << 20).responseType,
    ).toBe('streamed_xor_chunks');
    expect(
      decodeRemoteReadRequest(request({ acceptedResponseTypes: [0, 1] }), 1 << 20).responseType,
    ).toBe('samples');
    // Whether the client takes samples too: a streamed read may fall back to them.
    expect(
      decodeRemoteReadRequest(request({ acceptedResponseTypes: [1, 0] }), 1 << 20).acceptsSamples,
    ).toBe(true);
    expect(
      decodeRemoteReadRequest(request({ acceptedResponseTypes: [1] }), 1 << 20).acceptsSamples,
    ).toBe(false);
  });

  it('refuses a body that is not snappy, or asks only for unknown response types', () => {
    expect(() => decodeRemoteReadRequest(new Uint8Array([0xff, 0xff]), 1 << 20)).toThrow(
      ProtocolDecodeError,
    );
    expect(() => decodeRemoteReadRequest(request({ acceptedResponseTypes: [7] }), 1 << 20)).toThrow(
      /does not support any of the requested response types/,
    );
  });
});

describe('encodeRemoteReadSamples', () => {
  it('writes a ReadResponse that the upstream type reads back, NaN as the staleness marker', () => {
    const body = encodeRemoteReadSamples([
      [
        {
          labels: [
            { name: '__name__', value: 'up' },
            { name: 'host', value: 'a' },
          ],
          timestampsMs: [1_000, 2_000, 3_000],
          values: [1, Number.NaN, -2.5],
        },
      ],
      [],
    ]);
    const raw = uncompressSync(body) as Buffer;
    const decoded = remoteReadTypes().readResponse.decode(raw) as unknown as Decoded;
    expect(decoded.results).toHaveLength(2);
    const [series] = decoded.results[0]!.timeseries;
    expect(series!.labels).toEqual([
      { name: '__name__', value: 'up' },
      { name: 'host', value: 'a' },
    ]);
    expect(series!.samples.map((s) => [s.timestamp.toNumber(), s.value])).toEqual([
      [1_000, 1],
      [2_000, Number.NaN],
      [3_000, -2.5],
    ]);
    // The stale sample's value: tag 0x09, then 0x7ff0000000000002 little-endian.
    expect(raw.includes(Buffer.from('09' + '02000000' + '0000f07f', 'hex'))).toBe(true);
  });

  it('writes a NaN that is a value as NormalNaN, and only flagged points as markers', () => {
    const body = encodeRemoteReadSamples([
      [
        {
          labels: [{ name: '__name__', value: 'q' }],
          timestampsMs: [1_000, 2_000, 3_000, 4_000],
          values: [Number.NaN, Number.NaN, Infinity, -Infinity],
          stale: [0, 1, 0, 0],
        },
      ],
    ]);
    const raw = uncompressSync(body) as Buffer;
    const decoded = remoteReadTypes().readResponse.decode(raw) as unknown as Decoded;
    expect(decoded.results[0]!.timeseries[0]!.samples.map((s) => s.value)).toEqual([
      Number.NaN,
      Number.NaN,
      Infinity,
      -Infinity,
    ]);
    // 0x7ff8000000000001 (NormalNaN) once, then the marker once, little-endian after tag 0x09.
    const normal = Buffer.from('09' + '01000000' + '0000f87f', 'hex');
    const stale = Buffer.from('09' + '02000000' + '0000f07f', 'hex');
    expect(raw.indexOf(normal)).toBeGreaterThan(-1);
    expect(raw.indexOf(normal, raw.indexOf(normal) + 1)).toBe(-1);
    expect(raw.indexOf(stale)).toBeGreaterThan(raw.indexOf(normal));
  });
});

describe('encodeChunkedReadFrames', () => {
  const times = Array.from({ length: 1000 }, (_, i) => 1_700_000_000_000 + i * 15_000);
  const series = {
    labels: [{ name: '__name__', value: 'x' }],
    timestampsMs: times,
    values: times.map((_, i) => Math.sqrt(i)),
  };

  it('frames ChunkedReadResponses with their checksums, the chunks decoding to the series', () => {
    const stream = Buffer.concat(encodeChunkedReadFrames(3, series));
    const messages = frames(stream).map(
      (m) =>
        remoteReadTypes().chunkedReadResponse.decode(m) as unknown as {
          queryIndex: { toNumber(): number };
          chunkedSeries: { labels: unknown[]; chunks: { type: number; data: Uint8Array }[] }[];
        },
    );
    expect(messages).toHaveLength(1);
    expect(messages[0]!.queryIndex.toNumber()).toBe(3);
    const chunks = messages[0]!.chunkedSeries[0]!.chunks;
    expect(chunks).toHaveLength(9);
    expect(chunks.every((c) => c.type === 1)).toBe(true);
    expect(chunks.flatMap((c) => decodeXorChunk(c.data).timestampsMs)).toEqual(times);
    expect(chunks.flatMap((c) => decodeXorChunk(c.data).values)).toEqual(series.values);
  });

  it('cuts a series over several frames when it passes the frame size', () => {
    const stream = Buffer.concat(encodeChunkedReadFrames(0, series, 2_000));
    const messages = frames(stream);
    expect(messages.length).toBeGreaterThan(2);
    const times2 = messages.flatMap((m) => {
      const decoded = remoteReadTypes().chunkedReadResponse.decode(m) as unknown as {
        chunkedSeries: { chunks: { data: Uint8Array }[] }[];
      };
      return decoded.chunkedSeries[0]!.chunks.flatMap((c) => decodeXorChunk(c.data).timestampsMs);
    });
    expect(times2).toEqual(times);
  });
});
