import { compressSync } from 'snappy';
import { describe, expect, it } from 'vitest';
import type {
  AgentProtocol,
  DecodeOptions,
  DecodedHostSamples,
  ProtocolSample,
  InfluxApi,
  InfluxDecodeOptions,
  InfluxPrecision,
  LineProtocolFieldValue,
  LineProtocolPoint,
  OtlpEncoding,
  OtlpPartialSuccess,
  ProtocolErrorCode,
  RejectReason,
  SkipReason,
  SnappyDecodeOptions,
} from './index.js';
import {
  LineProtocolSyntaxError,
  ProtocolDecodeError,
  decodeCollectdJson,
  decodeInfluxLineProtocol,
  decodeOtlpMetricsJson,
  decodeOtlpMetricsProtobuf,
  decodeRemoteWriteV1,
  decodeRemoteWriteV2,
  describeCounts,
  encodeOtlpMetricsResponse,
  parseInfluxPrecision,
  parseLineProtocol,
  rejectReasons,
  skipReasons,
  totalCount,
} from './index.js';
import { otlpMetricsTypes, remoteWriteTypes } from './proto-types.js';

const nowMs = 1_750_000_000_000;
const options: DecodeOptions = { nowMs };
const snappyOptions: SnappyDecodeOptions = { nowMs, maxDecodedBytes: 1 << 20 };
const text = (value: string) => new TextEncoder().encode(value);

/**
 * The same two points in each protocol: `load` = 1 and `mem` = NaN on host `h` at `nowMs`
 * (1e101 where the protocol cannot carry NaN: both are values Prometheus stores, and so do we).
 * Every decoder must answer with the same shape and counts.
 */
function bodies(): [AgentProtocol, () => DecodedHostSamples][] {
  const v1 = remoteWriteTypes().writeRequest;
  const v2 = remoteWriteTypes().writeV2Request;
  const otlp = otlpMetricsTypes().request;
  const otlpRequest = {
    resourceMetrics: [
      {
        resource: { attributes: [{ key: 'host.name', value: { stringValue: 'h' } }] },
        scopeMetrics: [
          {
            metrics: [
              {
                name: 'load',
                gauge: { dataPoints: [{ timeUnixNano: `${nowMs}000000`, asDouble: 1 }] },
              },
              {
                name: 'mem',
                gauge: { dataPoints: [{ timeUnixNano: `${nowMs}000000`, asDouble: 'NaN' }] },
              },
            ],
          },
        ],
      },
    ],
  };
  const collectdList = (type: string, value: number | null) => ({
    values: [value],
    dstypes: ['gauge'],
    dsnames: ['value'],
    time: nowMs / 1000,
    interval: 10,
    host: 'h',
    plugin: 'p',
    plugin_instance: '',
    type,
    type_instance: '',
  });
  const promSeries = (name: string, value: number) => ({
    labels: [
      { name: '__name__', value: name },
      { name: 'host', value: 'h' },
    ],
    samples: [{ value, timestamp: nowMs }],
  });
  const influxOptions: InfluxDecodeOptions = { nowMs, precision: 'ms' };
  return [
    [
      'prometheus_remote_write_v1',
      () =>
        decodeRemoteWriteV1(
          compressSync(
            v1
              .encode(
                v1.fromObject({
                  timeseries: [promSeries('load', 1), promSeries('mem', Number.NaN)],
                }),
              )
              .finish(),
          ),
          snappyOptions,
        ),
    ],
    [
      'prometheus_remote_write_v2',
      () =>
        decodeRemoteWriteV2(
          compressSync(
            v2
              .encode(
                v2.fromObject({
                  symbols: ['', '__name__', 'load', 'host', 'h', 'mem'],
                  timeseries: [
                    { labelsRefs: [1, 2, 3, 4], samples: [{ value: 1, timestamp: nowMs }] },
                    {
                      labelsRefs: [1, 5, 3, 4],
                      samples: [{ value: Number.NaN, timestamp: nowMs }],
                    },
                  ],
                }),
              )
              .finish(),
          ),
          snappyOptions,
        ),
    ],
    [
      'otlp_metrics_protobuf',
      () => decodeOtlpMetricsProtobuf(otlp.encode(otlp.fromObject(otlpRequest)).finish(), options),
    ],
    ['otlp_metrics_json', () => decodeOtlpMetricsJson(text(JSON.stringify(otlpRequest)), options)],
    [
      'influx_line_protocol',
      // Line protocol has no NaN (InfluxDB refuses one): a value beyond /ingest's bound instead.
      () => decodeInfluxLineProtocol(text(`x,host=h load=1,mem=1e101 ${nowMs}`), influxOptions),
    ],
    [
      'collectd_json',
      // collectd writes NaN as null (skipped): a value beyond /ingest's bound instead.
      () =>
        decodeCollectdJson(
          text(JSON.stringify([collectdList('load', 1), collectdList('mem', 1e101)])),
          options,
        ),
    ],
  ];
}

describe('@monitor/protocols', () => {
  it.each(bodies())('decodes %s into the one shape every protocol shares', (_protocol, decode) => {
    const decoded = decode();
    const [sample] = decoded.samples;
    const expected: ProtocolSample = { host: 'h', timeMs: nowMs, metrics: {}, tags: {} };
    expect(decoded.samples).toHaveLength(1);
    expect({ ...sample, metrics: {}, tags: {} }).toEqual(expected);
    const [load, mem] = Object.values(sample!.metrics);
    expect(load).toBe(1);
    expect([Number.NaN, 1e101]).toContainEqual(mem);
    expect(decoded.accepted).toBe(2);
    expect(totalCount(decoded.rejected)).toBe(0);
    for (const reason of Object.keys(decoded.rejected)) {
      expect(rejectReasons).toContain(reason as RejectReason);
    }
    for (const reason of Object.keys(decoded.skipped)) {
      expect(skipReasons).toContain(reason as SkipReason);
    }
    expect(describeCounts(decoded.rejected)).toBe('');
  });

  it('answers OTLP in either encoding', () => {
    const partial: OtlpPartialSuccess = { rejectedDataPoints: 1, errorMessage: '1 no_host' };
    const encodings: OtlpEncoding[] = ['protobuf', 'json'];
    for (const encoding of encodings) {
      expect(encodeOtlpMetricsResponse(partial, encoding).length).toBeGreaterThan(0);
    }
  });

  it('parses line protocol and precisions on its own', () => {
    const api: InfluxApi = 'v1';
    const precision: InfluxPrecision | undefined = parseInfluxPrecision('h', api);
    expect(precision).toBe('h');
    const points: LineProtocolPoint[] = parseLineProtocol('m f=1i');
    const value: LineProtocolFieldValue | undefined = points[0]?.fields[0]?.[1];
    expect(value).toEqual({ type: 'integer', value: 1 });
  });

  it('throws typed errors that carry a code, the protocol and no HTTP', () => {
    const codes: ProtocolErrorCode[] = [];
    for (const attempt of [
      () => decodeRemoteWriteV1(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]), snappyOptions),
      () => decodeOtlpMetricsJson(text('{'), options),
      () => parseLineProtocol('m'),
    ]) {
      try {
        attempt();
      } catch (err) {
        expect(err).toBeInstanceOf(ProtocolDecodeError);
        expect((err as ProtocolDecodeError).retriable).toBe(false);
        codes.push((err as ProtocolDecodeError).code);
        if (err instanceof LineProtocolSyntaxError) expect(err.line).toBe(1);
      }
    }
    expect(codes).toEqual(['body_too_large', 'malformed_body', 'malformed_body']);
  });
});
