import { compressSync as compress } from 'snappy';
import { describe, expect, it } from 'vitest';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { remoteWriteTypes } from './proto-types.js';
import { decodeRemoteWriteV1 } from './remote-write-v1.js';

type Labels = Record<string, string>;
type Series = {
  labels: Labels;
  samples: { value: number; timestamp: number }[];
  histograms?: object[];
  exemplars?: object[];
};

const options = { nowMs: 1_750_000_000_000, maxDecodedBytes: 10_000_000 };
const t0 = 1_750_000_000_000;

/** A body as Prometheus sends it: prompb.WriteRequest, encoded by the same types, snappy. */
function writeRequestBody(series: Series[]): Uint8Array {
  const type = remoteWriteTypes().writeRequest;
  const message = type.fromObject({
    timeseries: series.map((s) => ({
      labels: Object.entries(s.labels).map(([name, value]) => ({ name, value })),
      samples: s.samples,
      histograms: s.histograms ?? [],
      exemplars: s.exemplars ?? [],
    })),
  });
  return compress(type.encode(message).finish());
}

/** The bytes of Prometheus' staleness marker, written where no float conversion can touch it. */
function staleMarker(): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, 2, true);
  view.setUint32(4, 0x7ff00000, true);
  return view.getFloat64(0, true);
}

describe('decodeRemoteWriteV1', () => {
  it('maps __name__ to the metric, instance without port to the host, other labels to tags', () => {
    const body = writeRequestBody([
      {
        labels: { __name__: 'node_load1', instance: 'node-1:9100', job: 'node' },
        samples: [{ value: 0.5, timestamp: t0 }],
      },
    ]);
    expect(decodeRemoteWriteV1(body, options)).toEqual({
      samples: [
        {
          host: 'node-1',
          timeMs: t0,
          metrics: { node_load1: 0.5 },
          tags: { instance: 'node-1:9100', job: 'node' },
        },
      ],
      accepted: 1,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });

  it('prefers the host label over instance', () => {
    const body = writeRequestBody([
      {
        labels: { __name__: 'up', host: 'db-1', instance: '10.0.0.5:9100' },
        samples: [{ value: 1, timestamp: t0 }],
      },
    ]);
    const [sample] = decodeRemoteWriteV1(body, options).samples;
    expect(sample?.host).toBe('db-1');
    expect(sample?.tags).toEqual({ host: 'db-1', instance: '10.0.0.5:9100' });
  });

  it('strips the port of a bracketed IPv6 instance and keeps an instance without port', () => {
    const body = writeRequestBody([
      { labels: { __name__: 'a', instance: '[::1]:9100' }, samples: [{ value: 1, timestamp: t0 }] },
      { labels: { __name__: 'b', instance: 'plain-host' }, samples: [{ value: 1, timestamp: t0 }] },
    ]);
    expect(decodeRemoteWriteV1(body, options).samples.map((s) => s.host)).toEqual([
      '::1',
      'plain-host',
    ]);
  });

  it('groups series of the same host, time and tags into one sample', () => {
    const labels = { instance: 'h:1', job: 'node' };
    const body = writeRequestBody([
      { labels: { __name__: 'a', ...labels }, samples: [{ value: 1, timestamp: t0 }] },
      { labels: { __name__: 'b', ...labels }, samples: [{ value: 2, timestamp: t0 }] },
      { labels: { __name__: 'a', ...labels }, samples: [{ value: 3, timestamp: t0 + 15_000 }] },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    expect(decoded.samples).toEqual([
      { host: 'h', timeMs: t0, metrics: { a: 1, b: 2 }, tags: { instance: 'h:1', job: 'node' } },
      { host: 'h', timeMs: t0 + 15_000, metrics: { a: 3 }, tags: { instance: 'h:1', job: 'node' } },
    ]);
    expect(decoded.accepted).toBe(3);
  });

  it('keeps two series that differ only in tags, each with its own tags', () => {
    const body = writeRequestBody([
      {
        labels: { __name__: 'node_cpu_seconds_total', cpu: '0', instance: 'h:9100' },
        samples: [{ value: 10, timestamp: t0 }],
      },
      {
        labels: { __name__: 'node_cpu_seconds_total', cpu: '1', instance: 'h:9100' },
        samples: [{ value: 20, timestamp: t0 }],
      },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    expect(decoded.samples).toEqual([
      {
        host: 'h',
        timeMs: t0,
        metrics: { node_cpu_seconds_total: 10 },
        tags: { cpu: '0', instance: 'h:9100' },
      },
      {
        host: 'h',
        timeMs: t0,
        metrics: { node_cpu_seconds_total: 20 },
        tags: { cpu: '1', instance: 'h:9100' },
      },
    ]);
    expect(decoded.rejected).toEqual({});
  });

  it('keeps one point per series and time, counting a repeated one', () => {
    const body = writeRequestBody([
      { labels: { __name__: 'up', instance: 'h:1' }, samples: [{ value: 1, timestamp: t0 }] },
      { labels: { __name__: 'up', instance: 'h:1' }, samples: [{ value: 2, timestamp: t0 }] },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    expect(decoded.samples.map((s) => s.metrics)).toEqual([{ up: 1 }]);
    expect(decoded.rejected).toEqual({ duplicate_series_time: 1 });
  });

  it('takes staleness markers as the end of their series, and any other NaN, infinity or size as a value', () => {
    const body = writeRequestBody([
      {
        labels: { __name__: 'up', instance: 'h:1' },
        samples: [
          { value: staleMarker(), timestamp: t0 },
          { value: Number.NaN, timestamp: t0 + 1 },
          { value: Number.POSITIVE_INFINITY, timestamp: t0 + 2 },
          { value: 1e101, timestamp: t0 + 3 },
          { value: 7, timestamp: t0 + 4 },
        ],
      },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    expect(decoded.skipped).toEqual({});
    expect(decoded.rejected).toEqual({});
    expect(decoded.accepted).toBe(5);
    expect(decoded.samples).toEqual([
      { host: 'h', timeMs: t0, metrics: {}, tags: { instance: 'h:1' }, staleMetrics: ['up'] },
      { host: 'h', timeMs: t0 + 1, metrics: { up: Number.NaN }, tags: { instance: 'h:1' } },
      { host: 'h', timeMs: t0 + 2, metrics: { up: Infinity }, tags: { instance: 'h:1' } },
      { host: 'h', timeMs: t0 + 3, metrics: { up: 1e101 }, tags: { instance: 'h:1' } },
      { host: 'h', timeMs: t0 + 4, metrics: { up: 7 }, tags: { instance: 'h:1' } },
    ]);
  });

  it('recognises the staleness marker in bytes as Prometheus writes them', () => {
    // Labels __name__="up", host="h"; Sample { value: 0x7ff0000000000002 (fixed64 LE),
    // timestamp: 1 }.
    const text = (s: string) => [s.length, ...Buffer.from(s)];
    const label = (name: string, value: string) => {
      const bytes = [0x0a, ...text(name), 0x12, ...text(value)];
      return [0x0a, bytes.length, ...bytes];
    };
    const sample = [0x09, 0x02, 0, 0, 0, 0, 0, 0xf0, 0x7f, 0x10, 0x01];
    const series = [
      ...label('__name__', 'up'),
      ...label('host', 'h'),
      0x12,
      sample.length,
      ...sample,
    ];
    const request = new Uint8Array([0x0a, series.length, ...series]);
    const decoded = decodeRemoteWriteV1(compress(request), options);
    expect(decoded.samples).toEqual([
      { host: 'h', timeMs: 1, metrics: {}, tags: { host: 'h' }, staleMetrics: ['up'] },
    ]);
  });

  it('rewrites characters the /ingest name pattern refuses', () => {
    const body = writeRequestBody([
      {
        labels: { __name__: 'http/requests total', host: 'h' },
        samples: [{ value: 1, timestamp: t0 }],
      },
      { labels: { __name__: '9lives', host: 'h' }, samples: [{ value: 2, timestamp: t0 }] },
    ]);
    expect(decodeRemoteWriteV1(body, options).samples[0]?.metrics).toEqual({
      http_requests_total: 1,
      _9lives: 2,
    });
  });

  it('stores a series without host or instance under its job, else under remote-write', () => {
    const body = writeRequestBody([
      { labels: { __name__: 'up', job: 'node' }, samples: [{ value: 1, timestamp: t0 }] },
      {
        labels: { __name__: 'job:up:sum', rulegroup: 'g' },
        samples: [{ value: 3, timestamp: t0 }],
      },
    ]);
    expect(decodeRemoteWriteV1(body, options)).toEqual({
      samples: [
        { host: 'node', timeMs: t0, metrics: { up: 1 }, tags: { job: 'node' } },
        {
          host: 'remote-write',
          timeMs: t0,
          metrics: { 'job:up:sum': 3 },
          tags: { rulegroup: 'g' },
        },
      ],
      accepted: 2,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });

  it('counts series without a name, or with a host or tags /ingest refuses', () => {
    const body = writeRequestBody([
      { labels: { job: 'x', host: 'h' }, samples: [{ value: 1, timestamp: t0 }] },
      {
        labels: { __name__: 'up', host: 'h', long: 'v'.repeat(257) },
        samples: [{ value: 1, timestamp: t0 }],
      },
      { labels: { __name__: 'up', host: 'h'.repeat(256) }, samples: [{ value: 1, timestamp: t0 }] },
      { labels: { __name__: 'up', host: 'nul\u0000' }, samples: [{ value: 1, timestamp: t0 }] },
    ]);
    expect(decodeRemoteWriteV1(body, options)).toEqual({
      samples: [],
      accepted: 0,
      exemplars: 0,
      histograms: 0,
      rejected: {
        no_metric_name: 1,
        tag_value_too_long: 1,
        host_too_long: 1,
        unstorable_text: 1,
      },
      skipped: {},
    });
  });

  it('drops labels with an empty value, as Prometheus does', () => {
    const body = writeRequestBody([
      { labels: { __name__: 'up', host: 'h', empty: '' }, samples: [{ value: 1, timestamp: t0 }] },
    ]);
    expect(decodeRemoteWriteV1(body, options).samples[0]?.tags).toEqual({ host: 'h' });
  });

  it('groups unsorted labels like sorted ones', () => {
    const type = remoteWriteTypes().writeRequest;
    const series = (name: string, labels: [string, string][]) => ({
      labels: [['__name__', name], ...labels].map(([n, value]) => ({ name: n, value })),
      samples: [{ value: 1, timestamp: t0 }],
    });
    const message = type.fromObject({
      timeseries: [
        series('a', [
          ['host', 'h'],
          ['z', '1'],
          ['b', '2'],
        ]),
        series('b', [
          ['b', '2'],
          ['host', 'h'],
          ['z', '1'],
        ]),
      ],
    });
    const decoded = decodeRemoteWriteV1(compress(type.encode(message).finish()), options);
    expect(decoded.samples).toHaveLength(1);
    expect(decoded.samples[0]?.metrics).toEqual({ a: 1, b: 1 });
  });

  it('takes native histograms with their series, counts made absolute, a stale one a marker', () => {
    const staleNaN = new DataView(new Uint8Array([0x7f, 0xf0, 0, 0, 0, 0, 0, 2]).buffer);
    const body = writeRequestBody([
      {
        labels: { __name__: 'latency', host: 'h', job: 'api' },
        samples: [],
        histograms: [
          {
            countInt: 3,
            zeroCountInt: 1,
            sum: 1.5,
            schema: 1,
            zeroThreshold: 0.001,
            positiveSpans: [{ offset: 1, length: 2 }],
            positiveDeltas: [1, 0],
            resetHint: 2,
            timestamp: t0,
          },
          { countInt: 0, sum: staleNaN.getFloat64(0), timestamp: t0 + 15_000 },
        ],
      },
      // A value and a histogram of one series at one time: the first stands.
      {
        labels: { __name__: 'latency', host: 'h', job: 'api' },
        samples: [{ value: 1, timestamp: t0 }],
      },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    expect(decoded).toMatchObject({
      accepted: 1,
      histograms: 1,
      skipped: {},
      rejected: { duplicate_series_time: 1 },
    });
    expect(decoded.samples).toEqual([
      {
        host: 'h',
        timeMs: t0,
        metrics: {},
        tags: { host: 'h', job: 'api' },
        histograms: {
          latency: {
            integer: true,
            schema: 1,
            zeroThreshold: 0.001,
            zeroCount: 1,
            count: 3,
            sum: 1.5,
            positiveSpans: [{ offset: 1, length: 2 }],
            positiveBuckets: [1, 1],
            negativeSpans: [],
            negativeBuckets: [],
            counterResetHint: 'no',
            customValues: [],
          },
        },
      },
      {
        host: 'h',
        timeMs: t0 + 15_000,
        metrics: {},
        tags: { host: 'h', job: 'api' },
        staleMetrics: ['latency'],
      },
    ]);
  });

  it('refuses and counts a histogram Prometheus would refuse, or of too many buckets, keeping the rest', () => {
    const spans = [{ offset: 0, length: 3 }];
    const body = writeRequestBody([
      {
        labels: { __name__: 'latency', host: 'h' },
        samples: [],
        histograms: [
          {
            countInt: 6,
            schema: 3,
            positiveSpans: spans,
            positiveDeltas: [1, 1, 1],
            timestamp: t0,
          },
          {
            countInt: 6,
            schema: 9,
            positiveSpans: spans,
            positiveDeltas: [1, 1, 1],
            timestamp: t0,
          },
          { countInt: 6, schema: 3, positiveSpans: spans, positiveDeltas: [1, 1], timestamp: t0 },
          {
            countInt: 2,
            schema: 3,
            positiveSpans: spans,
            positiveDeltas: [1, 1, 1],
            timestamp: t0,
          },
          {
            countInt: 9,
            schema: 3,
            positiveSpans: spans,
            positiveDeltas: [1, -2, 1],
            timestamp: t0,
          },
        ],
      },
      { labels: { __name__: 'up', host: 'h' }, samples: [{ value: 1, timestamp: t0 }] },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    expect(decoded).toMatchObject({
      accepted: 1,
      histograms: 1,
      rejected: { invalid_histogram: 4 },
    });
    const fewer = decodeRemoteWriteV1(body, { ...options, maxHistogramBuckets: 2 });
    expect(fewer).toMatchObject({ histograms: 0, rejected: { invalid_histogram: 5 } });
  });

  it('keeps exemplars with their series, at their own times, as Prometheus sends them apart', () => {
    // Prometheus' queue sends each exemplar as a series of its own, with no sample.
    const body = writeRequestBody([
      {
        labels: { __name__: 'requests_total', instance: 'web-1:9100', job: 'api' },
        samples: [{ value: 7, timestamp: t0 }],
      },
      {
        labels: { __name__: 'requests_total', instance: 'web-1:9100', job: 'api' },
        samples: [],
        exemplars: [
          { labels: [{ name: 'trace_id', value: 'abc123' }], value: 1, timestamp: t0 - 500 },
          { value: Number.NaN, timestamp: t0 },
        ],
      },
      {
        labels: { __name__: 'requests_total', instance: 'web-1:9100', job: 'api' },
        samples: [],
        exemplars: [
          { labels: [{ name: 'trace_id', value: 'x'.repeat(121) }], value: 2, timestamp: t0 },
        ],
      },
    ]);
    const decoded = decodeRemoteWriteV1(body, options);
    const tags = { instance: 'web-1:9100', job: 'api' };
    expect(decoded).toEqual({
      samples: [
        {
          host: 'web-1',
          timeMs: t0,
          metrics: { requests_total: 7 },
          tags,
          exemplars: [{ metric: 'requests_total', value: Number.NaN, labels: {} }],
        },
        {
          host: 'web-1',
          timeMs: t0 - 500,
          metrics: {},
          tags,
          exemplars: [{ metric: 'requests_total', value: 1, labels: { trace_id: 'abc123' } }],
        },
      ],
      accepted: 1,
      exemplars: 2,
      histograms: 0,
      // 8 + 121 characters, one over Prometheus' bound.
      rejected: { invalid_exemplar: 1 },
      skipped: {},
    });
  });

  it('rejects points outside the sample-time window when a retention is given', () => {
    const body = writeRequestBody([
      {
        labels: { __name__: 'up', host: 'h' },
        samples: [
          { value: 1, timestamp: t0 + 11 * 60_000 },
          { value: 1, timestamp: t0 - 8 * 86_400_000 },
          { value: 1, timestamp: t0 },
        ],
      },
    ]);
    const decoded = decodeRemoteWriteV1(body, { ...options, rawRetentionMs: 7 * 86_400_000 });
    expect(decoded.rejected).toEqual({ timestamp_in_future: 1, timestamp_too_old: 1 });
    expect(decoded.accepted).toBe(1);
  });

  it('refuses a body that is not snappy or not a WriteRequest with a malformed_body error', () => {
    expect(() =>
      decodeRemoteWriteV1(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), options),
    ).toThrow(ProtocolDecodeError);
    const notProtobuf = compress(new Uint8Array([0x0a, 0xff, 0x01]));
    expect(() => decodeRemoteWriteV1(notProtobuf, options)).toThrow(
      expect.objectContaining({
        code: 'malformed_body',
        protocol: 'prometheus_remote_write_v1',
        message: expect.stringContaining('WriteRequest'),
      }),
    );
  });

  it('refuses a body that declares more than maxDecodedBytes before decompressing it', () => {
    const body = writeRequestBody([
      { labels: { __name__: 'up', host: 'h' }, samples: [{ value: 1, timestamp: t0 }] },
    ]);
    expect(() => decodeRemoteWriteV1(body, { ...options, maxDecodedBytes: 4 })).toThrow(
      expect.objectContaining({ code: 'body_too_large' }),
    );
  });
});
