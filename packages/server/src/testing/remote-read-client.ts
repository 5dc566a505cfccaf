/** A client of the remote read API (prompb), for the tests that read our samples back. */
import protobuf from 'protobufjs';
import snappy from 'snappy';
import { decodeXorChunk } from '@monitor/protocols';

/**
 * prompb's read messages as a client reads them, written here from remote.proto and
 * types.proto rather than taken from our encoder's own loader.
 */
export const readTypes = protobuf.Root.fromJSON({
  nested: {
    ReadRequest: {
      fields: {
        queries: { rule: 'repeated', type: 'Query', id: 1 },
        acceptedResponseTypes: { rule: 'repeated', type: 'int32', id: 2 },
      },
    },
    Query: {
      fields: {
        startTimestampMs: { type: 'int64', id: 1 },
        endTimestampMs: { type: 'int64', id: 2 },
        matchers: { rule: 'repeated', type: 'LabelMatcher', id: 3 },
      },
    },
    LabelMatcher: {
      fields: {
        type: { type: 'int32', id: 1 },
        name: { type: 'string', id: 2 },
        value: { type: 'string', id: 3 },
      },
    },
    ReadResponse: { fields: { results: { rule: 'repeated', type: 'QueryResult', id: 1 } } },
    QueryResult: { fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } } },
    TimeSeries: {
      fields: {
        labels: { rule: 'repeated', type: 'Label', id: 1 },
        samples: { rule: 'repeated', type: 'Sample', id: 2 },
        histograms: { rule: 'repeated', type: 'Histogram', id: 4 },
      },
    },
    // The fields of a float histogram (types.proto's Histogram, its float side).
    Histogram: {
      fields: {
        countFloat: { type: 'double', id: 2 },
        sum: { type: 'double', id: 3 },
        schema: { type: 'sint32', id: 4 },
        zeroThreshold: { type: 'double', id: 5 },
        zeroCountFloat: { type: 'double', id: 7 },
        negativeSpans: { rule: 'repeated', type: 'BucketSpan', id: 8 },
        negativeCounts: { rule: 'repeated', type: 'double', id: 10 },
        positiveSpans: { rule: 'repeated', type: 'BucketSpan', id: 11 },
        positiveCounts: { rule: 'repeated', type: 'double', id: 13 },
        timestamp: { type: 'int64', id: 15 },
      },
    },
    BucketSpan: {
      fields: { offset: { type: 'sint32', id: 1 }, length: { type: 'uint32', id: 2 } },
    },
    Label: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
    Sample: { fields: { value: { type: 'double', id: 1 }, timestamp: { type: 'int64', id: 2 } } },
    ChunkedReadResponse: {
      fields: {
        chunkedSeries: { rule: 'repeated', type: 'ChunkedSeries', id: 1 },
        queryIndex: { type: 'int64', id: 2 },
      },
    },
    ChunkedSeries: {
      fields: {
        labels: { rule: 'repeated', type: 'Label', id: 1 },
        chunks: { rule: 'repeated', type: 'Chunk', id: 2 },
      },
    },
    Chunk: {
      fields: {
        minTimeMs: { type: 'int64', id: 1 },
        maxTimeMs: { type: 'int64', id: 2 },
        type: { type: 'int32', id: 3 },
        data: { type: 'bytes', id: 4 },
      },
    },
  },
});

type Label = { name: string; value: string };
/** One series as read back: labels, times, and each value's 64 bits in hex. */
export type ReadBack = { labels: string; times: number[]; bits: string[]; chunks: Uint8Array[] };

const toNumber = (v: unknown): number =>
  typeof v === 'number' ? v : (v as { toNumber(): number }).toNumber();

function labelKey(labels: Label[]): string {
  return labels.map((l) => `${l.name}=${l.value}`).join(',');
}

/** A `samples` answer, per query. */
export function readSamples(body: Buffer): ReadBack[][] {
  const decoded = readTypes
    .lookupType('ReadResponse')
    .decode(snappy.uncompressSync(body) as Buffer) as unknown as {
    results: {
      timeseries: { labels: Label[]; samples: { value: number; timestamp: unknown }[] }[];
    }[];
  };
  const view = new DataView(new ArrayBuffer(8));
  return decoded.results.map((r) =>
    r.timeseries
      .map((ts) => ({
        labels: labelKey(ts.labels),
        times: ts.samples.map((s) => toNumber(s.timestamp)),
        // protobufjs reads doubles through a typed array: NaN payloads survive up to here.
        bits: ts.samples.map((s) => {
          view.setFloat64(0, s.value ?? 0);
          return view.getBigUint64(0).toString(16);
        }),
        chunks: [],
      }))
      .sort((a, b) => (a.labels < b.labels ? -1 : a.labels > b.labels ? 1 : 0)),
  );
}

/** A `streamed_xor_chunks` answer, per query: frames checked, chunks decoded. */
export function readStream(body: Buffer): ReadBack[][] {
  const type = readTypes.lookupType('ChunkedReadResponse');
  const out: ReadBack[][] = [];
  let at = 0;
  while (at < body.length) {
    let size = 0;
    let scale = 1;
    for (;;) {
      const byte = body[at++]!;
      size += (byte & 0x7f) * scale;
      scale *= 128;
      if (byte < 0x80) break;
    }
    at += 4; // the CRC-32C, checked by the protocols unit test
    const message = type.decode(body.subarray(at, at + size)) as unknown as {
      queryIndex: unknown;
      chunkedSeries: { labels: Label[]; chunks: { type: number; data: Uint8Array }[] }[];
    };
    at += size;
    const index = toNumber(message.queryIndex ?? 0);
    out[index] ??= [];
    for (const series of message.chunkedSeries) {
      const key = labelKey(series.labels);
      let entry = out[index].at(-1);
      if (entry?.labels !== key) {
        entry = { labels: key, times: [], bits: [], chunks: [] };
        out[index].push(entry);
      }
      for (const chunk of series.chunks) {
        if (chunk.type !== 1) throw new Error(`expected XOR chunks (type 1), got ${chunk.type}`);
        const decoded = decodeXorChunk(chunk.data);
        entry.times.push(...decoded.timestampsMs);
        entry.bits.push(
          ...decoded.valueBits.map(([hi, lo]) => ((BigInt(hi) << 32n) | BigInt(lo)).toString(16)),
        );
        entry.chunks.push(chunk.data);
      }
    }
  }
  return out;
}
