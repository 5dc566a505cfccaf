import protobuf from 'protobufjs';
import { compressSync } from 'snappy';
import { crc32c } from './crc32c.js';
import type { Int64 } from './int64.js';
import { int64ToNumber } from './int64.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { decodeMessage, remoteReadTypes } from './proto-types.js';
import { decompressSnappyBlock } from './snappy-block.js';
import { encodeXorChunks, floatBits } from './xor-chunk.js';

const protocol = 'prometheus_remote_read';

type ReadMatchType = '=' | '!=' | '=~' | '!~';

/** One label matcher of a remote read query. */
type ReadMatcher = { type: ReadMatchType; name: string; value: string };

/** What the querying Prometheus will do with the samples (prompb.ReadHints). */
type ReadHints = { stepMs: number; func: string; rangeMs: number };

/** One query of a ReadRequest: series matching every matcher, samples in [startMs, endMs]. */
export type ReadQuery = {
  startMs: number;
  endMs: number;
  matchers: ReadMatcher[];
  hints: ReadHints | null;
};

/** `samples`: one snappy ReadResponse; `streamed_xor_chunks`: framed ChunkedReadResponses. */
export type ReadResponseType = 'samples' | 'streamed_xor_chunks';

export type RemoteReadRequest = {
  queries: ReadQuery[];
  /** The response type to answer with, negotiated as Prometheus does (first supported one). */
  responseType: ReadResponseType;
  /** Whether the client takes `samples` too (asked none, or listed it). */
  acceptsSamples: boolean;
};

/** Content-Type of each response type (the streamed one has no Content-Encoding). */
export const remoteReadContentTypes: Readonly<Record<ReadResponseType, string>> = {
  samples: 'application/x-protobuf',
  streamed_xor_chunks: 'application/x-streamed-protobuf; proto=prometheus.ChunkedReadResponse',
};

type WireReadRequest = {
  queries?: {
    startTimestampMs?: Int64 | null;
    endTimestampMs?: Int64 | null;
    matchers?: { type?: number | null; name?: string | null; value?: string | null }[] | null;
    hints?: { stepMs?: Int64 | null; func?: string | null; rangeMs?: Int64 | null } | null;
  }[];
  acceptedResponseTypes?: number[];
};

const matchTypes: readonly ReadMatchType[] = ['=', '!=', '=~', '!~'];
const responseTypes: readonly ReadResponseType[] = ['samples', 'streamed_xor_chunks'];

/**
 * A snappy-compressed prometheus.ReadRequest (at most `maxDecodedBytes` decompressed), its
 * response type negotiated as Prometheus' NegotiateResponseType does: none asked means
 * `samples`, else the first one asked that is supported. Throws ProtocolDecodeError
 * (`malformed_body` also for an unknown matcher type or no supported response type).
 */
export function decodeRemoteReadRequest(
  body: Uint8Array,
  maxDecodedBytes: number,
): RemoteReadRequest {
  const bytes = decompressSnappyBlock(body, maxDecodedBytes, protocol);
  const wire = decodeMessage<WireReadRequest>(remoteReadTypes().readRequest, bytes, protocol);
  const accepted = wire.acceptedResponseTypes ?? [];
  let responseType: ReadResponseType | undefined = accepted.length === 0 ? 'samples' : undefined;
  for (const asked of accepted) {
    responseType = responseTypes[asked];
    if (responseType !== undefined) break;
  }
  if (responseType === undefined) {
    throw new ProtocolDecodeError(
      'malformed_body',
      protocol,
      `server does not support any of the requested response types: ${JSON.stringify(accepted)}; supported: SAMPLES (0), STREAMED_XOR_CHUNKS (1)`,
    );
  }
  const queries = (wire.queries ?? []).map((q): ReadQuery => {
    const matchers = (q.matchers ?? []).map((m): ReadMatcher => {
      const type = matchTypes[m.type ?? 0];
      if (type === undefined) {
        throw new ProtocolDecodeError(
          'malformed_body',
          protocol,
          `invalid matcher type ${String(m.type)}`,
        );
      }
      return { type, name: m.name ?? '', value: m.value ?? '' };
    });
    const hints =
      q.hints === null || q.hints === undefined
        ? null
        : {
            stepMs: int64ToNumber(q.hints.stepMs),
            func: q.hints.func ?? '',
            rangeMs: int64ToNumber(q.hints.rangeMs),
          };
    return {
      startMs: int64ToNumber(q.startTimestampMs),
      endMs: int64ToNumber(q.endTimestampMs),
      matchers,
      hints,
    };
  });
  return { queries, responseType, acceptsSamples: accepted.length === 0 || accepted.includes(0) };
}

/**
 * A series to send: labels sorted by name, samples in ascending time order; `stale` flags the
 * staleness markers (1), and without it every NaN is one (as PromQL's SourceSeries).
 */
export type ReadSeries = {
  labels: readonly { name: string; value: string }[];
  timestampsMs: ArrayLike<number>;
  values: ArrayLike<number>;
  stale?: ArrayLike<number>;
  /** Native histograms, in ascending time order (the `samples` response only). */
  histograms?: { timestampsMs: ArrayLike<number>; values: readonly ReadHistogram[] };
};

/** A native histogram as remote read sends one: absolute counts, written as a float histogram. */
type ReadHistogram = {
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  count: number;
  sum: number;
  positiveSpans: readonly { offset: number; length: number }[];
  positiveBuckets: readonly number[];
  negativeSpans: readonly { offset: number; length: number }[];
  negativeBuckets: readonly number[];
};

/** One prompb.Histogram with float counts (count_float, zero_count_float, *_counts). */
function histogramMessage(h: ReadHistogram, timestampMs: number): Uint8Array {
  const type = remoteReadTypes().histogram;
  return type
    .encode(
      type.fromObject({
        countFloat: h.count,
        sum: h.sum,
        schema: h.schema,
        zeroThreshold: h.zeroThreshold,
        zeroCountFloat: h.zeroCount,
        negativeSpans: h.negativeSpans,
        negativeCounts: h.negativeBuckets,
        positiveSpans: h.positiveSpans,
        positiveCounts: h.positiveBuckets,
        timestamp: timestampMs,
      }),
    )
    .finish();
}

function writeLabel(writer: protobuf.Writer, field: number, name: string, value: string): void {
  writer
    .uint32((field << 3) | 2)
    .fork()
    .uint32((1 << 3) | 2)
    .string(name)
    .uint32((2 << 3) | 2)
    .string(value)
    .ldelim();
}

/**
 * The `samples` response: a snappy-compressed prometheus.ReadResponse with one QueryResult per
 * query, in order. Written field by field rather than through the reflected type, for two
 * reasons: a NaN is written as the staleness marker's or NormalNaN's exact bits (a JavaScript
 * NaN need not keep its payload), and a large answer is not first built as objects.
 */
export function encodeRemoteReadSamples(results: readonly (readonly ReadSeries[])[]): Buffer {
  const writer = protobuf.Writer.create();
  for (const result of results) {
    writer.uint32((1 << 3) | 2).fork(); // ReadResponse.results
    for (const series of result) {
      writer.uint32((1 << 3) | 2).fork(); // QueryResult.timeseries
      for (const label of series.labels) writeLabel(writer, 1, label.name, label.value);
      const { timestampsMs, values, stale } = series;
      for (let i = 0; i < timestampsMs.length; i++) {
        writer.uint32((2 << 3) | 2).fork(); // TimeSeries.samples
        const value = values[i]!;
        writer.uint32((1 << 3) | 1); // Sample.value, fixed64 little-endian
        if (Number.isNaN(value)) {
          const bits = floatBits(value, stale === undefined || stale[i] === 1);
          writer.fixed32(bits.lo).fixed32(bits.hi);
        } else writer.double(value);
        writer.uint32(2 << 3).int64(timestampsMs[i]!); // Sample.timestamp
        writer.ldelim();
      }
      const histograms = series.histograms;
      for (let i = 0; i < (histograms?.timestampsMs.length ?? 0); i++) {
        // TimeSeries.histograms
        writer
          .uint32((4 << 3) | 2)
          .bytes(histogramMessage(histograms!.values[i]!, histograms!.timestampsMs[i]!));
      }
      writer.ldelim();
    }
    writer.ldelim();
  }
  return compressSync(Buffer.from(writer.finish()));
}

/** Prometheus' default `--storage.remote.read-max-bytes-in-frame`. */
const defaultMaxBytesInFrame = 1_048_576;

function uvarint(value: number): number[] {
  const out: number[] = [];
  let x = value;
  while (x >= 0x80) {
    out.push((x % 128) | 0x80);
    x = Math.floor(x / 128);
  }
  out.push(x);
  return out;
}

/** One frame of the stream: uvarint size, big-endian CRC-32C of the message, the message. */
function frame(message: Uint8Array): Buffer {
  const size = uvarint(message.length);
  const out = Buffer.allocUnsafe(size.length + 4 + message.length);
  out.set(size, 0);
  out.writeUInt32BE(crc32c(message), size.length);
  out.set(message, size.length + 4);
  return out;
}

/**
 * One series of a `streamed_xor_chunks` answer as its frames, as Prometheus'
 * StreamChunkedReadResponses cuts them: the series' XOR chunks (120 samples each) in time
 * order, a frame closed once its chunks pass `maxBytesInFrame` less the labels' size, so no
 * frame holds two series. A series without samples gives no frame.
 */
export function encodeChunkedReadFrames(
  queryIndex: number,
  series: ReadSeries,
  maxBytesInFrame = defaultMaxBytesInFrame,
): Buffer[] {
  const type = remoteReadTypes().chunkedReadResponse;
  const labels = series.labels.map(({ name, value }) => ({ name, value }));
  let maxDataLength = maxBytesInFrame;
  for (const label of labels) maxDataLength -= label.name.length + label.value.length + 4;
  const frames: Buffer[] = [];
  let chunks: { minTimeMs: number; maxTimeMs: number; type: number; data: Uint8Array }[] = [];
  let left = maxDataLength;
  const all = encodeXorChunks(series.timestampsMs, series.values, undefined, series.stale);
  all.forEach((chunk, i) => {
    chunks.push({ ...chunk, type: 1 /* XOR */ });
    left -= chunk.data.length + 24;
    if (left > 0 && i + 1 < all.length) return;
    const message = type.encode({ chunkedSeries: [{ labels, chunks }], queryIndex }).finish();
    frames.push(frame(message));
    chunks = [];
    left = maxDataLength;
  });
  return frames;
}
