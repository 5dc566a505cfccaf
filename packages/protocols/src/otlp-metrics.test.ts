import { describe, expect, it } from 'vitest';
import { decodeOtlpMetricsJson, decodeOtlpMetricsProtobuf } from './otlp-metrics.js';
import { otlpMetricsTypes } from './proto-types.js';

const options = { nowMs: 1_750_000_000_000 };
/** 1750000000.123456789 s: beyond 2^53 ns, and not on a millisecond. */
const timeUnixNano = '1750000000123456789';
const timeMs = 1_750_000_000_123;

const attribute = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** An ExportMetricsServiceRequest in ProtoJSON form (the form OTLP/JSON sends). */
function requestJson(resourceAttributes: object[], metrics: object[]): Record<string, unknown> {
  return {
    resourceMetrics: [
      {
        resource: { attributes: resourceAttributes },
        scopeMetrics: [{ scope: { name: 'test' }, metrics }],
      },
    ],
  };
}

function protobufBody(json: Record<string, unknown>): Uint8Array {
  const type = otlpMetricsTypes().request;
  return type.encode(type.fromObject(json)).finish();
}

function jsonBody(json: Record<string, unknown>): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(json));
}

/** Every case runs through both encodings: they must map the same. */
const encodings = [
  [
    'protobuf',
    (json: Record<string, unknown>) => decodeOtlpMetricsProtobuf(protobufBody(json), options),
  ],
  ['json', (json: Record<string, unknown>) => decodeOtlpMetricsJson(jsonBody(json), options)],
] as const;

describe.each(encodings)('OTLP metrics (%s)', (_encoding, decode) => {
  it('maps gauge and sum points, with host.name as host and string attributes as tags', () => {
    const json = requestJson(
      [
        attribute('host.name', 'web-1'),
        attribute('service.name', 'api'),
        { key: 'pid', value: { intValue: '42' } },
      ],
      [
        {
          name: 'system.memory.usage',
          gauge: { dataPoints: [{ timeUnixNano, asInt: '1048576' }] },
        },
        {
          name: 'http.server.requests',
          sum: {
            aggregationTemporality: 2,
            isMonotonic: true,
            dataPoints: [{ timeUnixNano, asDouble: 12.5 }],
          },
        },
      ],
    );
    expect(decode(json)).toEqual({
      samples: [
        {
          host: 'web-1',
          timeMs,
          metrics: { 'system.memory.usage': 1_048_576, 'http.server.requests': 12.5 },
          tags: { 'host.name': 'web-1', 'service.name': 'api' },
        },
      ],
      accepted: 2,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });

  it('falls back to service.instance.id, then service.name, for the host', () => {
    const gauge = [{ name: 'g', gauge: { dataPoints: [{ timeUnixNano, asDouble: 1 }] } }];
    const byInstance = decode(
      requestJson(
        [attribute('service.name', 'api'), attribute('service.instance.id', 'i-1')],
        gauge,
      ),
    );
    expect(byInstance.samples[0]?.host).toBe('i-1');
    expect(decode(requestJson([attribute('service.name', 'api')], gauge)).samples[0]?.host).toBe(
      'api',
    );
    expect(decode(requestJson([], gauge)).rejected).toEqual({ no_host: 1 });
  });

  it('lets point attributes win over resource attributes and groups by the merged tags', () => {
    const json = requestJson(
      [attribute('host.name', 'h'), attribute('env', 'prod')],
      [
        {
          name: 'cpu',
          gauge: {
            dataPoints: [
              {
                timeUnixNano,
                asDouble: 0.5,
                attributes: [attribute('env', 'canary'), attribute('cpu', '0')],
              },
            ],
          },
        },
        { name: 'mem', gauge: { dataPoints: [{ timeUnixNano, asDouble: 7 }] } },
      ],
    );
    expect(decode(json).samples).toEqual([
      {
        host: 'h',
        timeMs,
        metrics: { cpu: 0.5 },
        tags: { 'host.name': 'h', env: 'canary', cpu: '0' },
      },
      { host: 'h', timeMs, metrics: { mem: 7 }, tags: { 'host.name': 'h', env: 'prod' } },
    ]);
  });

  it('maps histogram, exponential histogram and summary points to _count and _sum, and an exponential histogram point to a native histogram too', () => {
    const json = requestJson(
      [attribute('host.name', 'h')],
      [
        {
          name: 'http.duration',
          histogram: {
            aggregationTemporality: 2,
            dataPoints: [
              {
                timeUnixNano,
                count: '10',
                sum: 2.5,
                bucketCounts: ['4', '6'],
                explicitBounds: [0.1],
              },
            ],
          },
        },
        {
          name: 'queue.wait',
          exponentialHistogram: {
            aggregationTemporality: 2,
            dataPoints: [{ timeUnixNano, count: '3', scale: 2, zeroCount: '1' }],
          },
        },
        {
          name: 'rpc.latency',
          summary: {
            dataPoints: [
              { timeUnixNano, count: '5', sum: 0, quantileValues: [{ quantile: 0.5, value: 1 }] },
            ],
          },
        },
      ],
    );
    expect(decode(json).samples[0]?.metrics).toEqual({
      'http.duration_count': 10,
      'http.duration_sum': 2.5,
      // No sum: the exponential histogram had none (it is optional).
      'queue.wait_count': 3,
      'rpc.latency_count': 5,
      'rpc.latency_sum': 0,
    });
    expect(decode(json).samples[0]?.histograms).toEqual({
      'queue.wait': {
        integer: true,
        schema: 2,
        zeroThreshold: 1e-128,
        zeroCount: 1,
        count: 3,
        // No sum: 0, as Prometheus' translation leaves it.
        sum: 0,
        positiveSpans: [],
        positiveBuckets: [],
        negativeSpans: [],
        negativeBuckets: [],
        counterResetHint: 'unknown',
        customValues: [],
      },
    });
  });

  it('skips points flagged no-recorded-value and points without a value', () => {
    const json = requestJson(
      [attribute('host.name', 'h')],
      [
        {
          name: 'g',
          gauge: {
            dataPoints: [{ timeUnixNano, asDouble: 1, flags: 1 }, { timeUnixNano }],
          },
        },
        { name: 'h', histogram: { dataPoints: [{ timeUnixNano, count: '1', flags: 1 }] } },
      ],
    );
    const decoded = decode(json);
    expect(decoded.skipped).toEqual({ no_recorded_value: 2, no_value: 1 });
    expect(decoded.samples).toEqual([]);
  });

  it('counts NaN values and missing times, and keeps points with different attributes apart', () => {
    const json = requestJson(
      [attribute('host.name', 'h')],
      [
        {
          name: 'cpu',
          gauge: {
            dataPoints: [
              { timeUnixNano, asDouble: 1, attributes: [attribute('cpu', '0')] },
              { timeUnixNano, asDouble: 2, attributes: [attribute('cpu', '1')] },
              { timeUnixNano: '0', asDouble: 3 },
            ],
          },
        },
        { name: 'nan', gauge: { dataPoints: [{ timeUnixNano, asDouble: 'NaN' }] } },
        { name: 'inf', gauge: { dataPoints: [{ timeUnixNano, asDouble: '-Infinity' }] } },
      ],
    );
    const decoded = decode(json);
    expect(decoded.rejected).toEqual({ invalid_timestamp: 1 });
    expect(decoded.accepted).toBe(4);
    expect(decoded.samples.flatMap((s) => Object.entries(s.metrics))).toContainEqual([
      'nan',
      Number.NaN,
    ]);
    expect(decoded.samples.flatMap((s) => Object.entries(s.metrics))).toContainEqual([
      'inf',
      Number.NEGATIVE_INFINITY,
    ]);
  });

  it('rewrites names /ingest refuses', () => {
    const json = requestJson(
      [attribute('host.name', 'h')],
      [{ name: 'process/open fds', gauge: { dataPoints: [{ timeUnixNano, asInt: '3' }] } }],
    );
    expect(decode(json).samples[0]?.metrics).toEqual({ process_open_fds: 3 });
  });
});

describe('decodeOtlpMetricsProtobuf', () => {
  it('throws a malformed_body error for bytes that are not a request', () => {
    expect(() => decodeOtlpMetricsProtobuf(new Uint8Array([0x0a, 0xff, 0x01]), options)).toThrow(
      expect.objectContaining({
        code: 'malformed_body',
        protocol: 'otlp_metrics_protobuf',
        message: expect.stringContaining('ExportMetricsServiceRequest'),
      }),
    );
  });

  it('decodes an empty body as an empty request', () => {
    expect(decodeOtlpMetricsProtobuf(new Uint8Array(0), options)).toEqual({
      samples: [],
      accepted: 0,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });
});

describe('decodeOtlpMetricsJson', () => {
  it('ignores unknown fields, as OTLP asks of receivers', () => {
    const json = requestJson(
      [attribute('host.name', 'h')],
      [{ name: 'g', futureField: true, gauge: { dataPoints: [{ timeUnixNano, asDouble: 1 }] } }],
    );
    expect(decodeOtlpMetricsJson(jsonBody(json), options).accepted).toBe(1);
  });

  it.each([
    ['not JSON', '{"resourceMetrics": ['],
    ['not an object', '[1, 2]'],
    ['a wrong type', '{"resourceMetrics": 5}'],
    [
      'a wrong nested type',
      '{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": 1}]}]}]}',
    ],
  ])('throws a malformed_body error for %s', (_case, text) => {
    expect(() => decodeOtlpMetricsJson(new TextEncoder().encode(text), options)).toThrow(
      expect.objectContaining({ code: 'malformed_body', protocol: 'otlp_metrics_json' }),
    );
  });
});

describe("opentelemetry-proto's example request", () => {
  it('decodes as JSON and, re-encoded, as protobuf to the same samples', async () => {
    const { default: example } = (await import('../proto/opentelemetry/examples/metrics.json', {
      with: { type: 'json' },
    })) as { default: Record<string, unknown> };
    const timeMs = 1_544_712_660_300;
    const tags = (attribute: string) => ({
      'service.name': 'my.service',
      [attribute]: 'some value',
    });
    const expected = {
      samples: [
        { host: 'my.service', timeMs, metrics: { 'my.counter': 5 }, tags: tags('my.counter.attr') },
        { host: 'my.service', timeMs, metrics: { 'my.gauge': 10 }, tags: tags('my.gauge.attr') },
        {
          host: 'my.service',
          timeMs,
          metrics: { 'my.histogram_count': 2, 'my.histogram_sum': 2 },
          tags: tags('my.histogram.attr'),
        },
        {
          host: 'my.service',
          timeMs,
          metrics: { 'my.exponential.histogram_count': 3, 'my.exponential.histogram_sum': 10 },
          tags: tags('my.exponential.histogram.attr'),
          // As Prometheus' translation makes it: bucket i is its bucket i + 1, a gap of one kept
          // as an empty bucket, its zero threshold 1e-128 whatever the point's, min and max
          // dropped; a delta histogram is a gauge histogram.
          histograms: {
            'my.exponential.histogram': {
              integer: true,
              schema: 0,
              zeroThreshold: 1e-128,
              zeroCount: 1,
              count: 3,
              sum: 10,
              positiveSpans: [{ offset: 2, length: 2 }],
              positiveBuckets: [0, 2],
              negativeSpans: [],
              negativeBuckets: [],
              counterResetHint: 'gauge',
              customValues: [],
            },
          },
        },
      ],
      accepted: 6,
      exemplars: 0,
      histograms: 1,
      rejected: {},
      skipped: {},
    };
    expect(decodeOtlpMetricsJson(jsonBody(example), options)).toEqual(expected);
    expect(decodeOtlpMetricsProtobuf(protobufBody(example), options)).toEqual(expected);
  });

  it('ignores exemplars, their hex trace and span ids included', () => {
    const json = requestJson(
      [attribute('host.name', 'h')],
      [
        {
          name: 'g',
          gauge: {
            dataPoints: [
              {
                timeUnixNano,
                asDouble: 1,
                exemplars: [
                  {
                    timeUnixNano,
                    asDouble: 0.5,
                    traceId: '5b8efff798038103d269b633813fc60c',
                    spanId: 'eee19b7ec3c1b174',
                  },
                ],
              },
            ],
          },
        },
      ],
    );
    expect(decodeOtlpMetricsJson(jsonBody(json), options).accepted).toBe(1);
  });
});

describe('OTLP exemplars', () => {
  const traceId = '5b8efff798038103d269b633813fc60c';
  const spanId = 'eee19b7ec3c1b174';
  /** A sum point with two exemplars; `id` writes the ids as the encoding carries bytes. */
  const request = (id: (hex: string) => string | Uint8Array) =>
    requestJson(
      [attribute('host.name', 'web-1')],
      [
        {
          name: 'requests',
          sum: {
            aggregationTemporality: 2,
            isMonotonic: true,
            dataPoints: [
              {
                timeUnixNano,
                asInt: '3',
                attributes: [attribute('route', '/a')],
                exemplars: [
                  {
                    timeUnixNano: '1749999999000000000',
                    asDouble: 0.5,
                    traceId: id(traceId),
                    spanId: id(spanId),
                    filteredAttributes: [
                      attribute('user', 'u1'),
                      { key: 'retries', value: { intValue: '9007199254740993' } },
                      { key: 'cached', value: { boolValue: false } },
                      { key: 'ratio', value: { doubleValue: 0.5 } },
                    ],
                  },
                  {
                    timeUnixNano: '1749999998000000000',
                    asInt: '2',
                    filteredAttributes: [attribute('comment', 'x'.repeat(122))],
                  },
                ],
              },
            ],
          },
        },
      ],
    );
  const expected = {
    samples: [
      {
        host: 'web-1',
        timeMs,
        metrics: { requests: 3 },
        tags: { 'host.name': 'web-1', route: '/a' },
      },
      {
        host: 'web-1',
        timeMs: 1_749_999_999_000,
        metrics: {},
        tags: { 'host.name': 'web-1', route: '/a' },
        exemplars: [
          {
            metric: 'requests',
            value: 0.5,
            labels: {
              trace_id: traceId,
              span_id: spanId,
              user: 'u1',
              retries: '9007199254740993',
              cached: 'false',
            },
          },
        ],
      },
      {
        host: 'web-1',
        timeMs: 1_749_999_998_000,
        metrics: {},
        tags: { 'host.name': 'web-1', route: '/a' },
        // Attributes past Prometheus' 128 characters are left out, as its translation does.
        exemplars: [{ metric: 'requests', value: 2, labels: {} }],
      },
    ],
    accepted: 1,
    exemplars: 2,
    histograms: 0,
    rejected: {},
    skipped: {},
  };

  it('go with their series, trace and span ids in hex, from protobuf', () => {
    const body = protobufBody(request((hex) => Buffer.from(hex, 'hex')));
    expect(decodeOtlpMetricsProtobuf(body, options)).toEqual(expected);
  });

  it("leave out a gauge's and a non-monotonic sum's, as Prometheus' translation does", () => {
    const exemplars = [{ timeUnixNano, asDouble: 1, traceId: Buffer.from(traceId, 'hex') }];
    const point = { timeUnixNano, asDouble: 2, exemplars };
    const json = requestJson(
      [attribute('host.name', 'web-1')],
      [
        { name: 'temperature', gauge: { dataPoints: [point] } },
        {
          name: 'queue',
          sum: { aggregationTemporality: 2, isMonotonic: false, dataPoints: [point] },
        },
      ],
    );
    const decoded = decodeOtlpMetricsProtobuf(protobufBody(json), options);
    expect(decoded).toMatchObject({ accepted: 2, exemplars: 0 });
    expect(decoded.samples.flatMap((sample) => sample.exemplars ?? [])).toEqual([]);
  });

  it('read the ids of OTLP/JSON as hex, as its encoding writes them', () => {
    expect(decodeOtlpMetricsJson(jsonBody(request((hex) => hex)), options)).toEqual(expected);
  });
});
