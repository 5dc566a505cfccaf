import { describe, expect, it } from 'vitest';
import {
  decodeInfluxLineProtocol,
  influxTimestampToMs,
  parseInfluxPrecision,
} from './influx-write.js';
import { LineProtocolSyntaxError } from './protocol-decode-error.js';

const nowMs = 1_750_000_000_000;
const body = (text: string) => new TextEncoder().encode(text);
const decode = (text: string, precision: 'ns' | 'us' | 'ms' | 's' | 'm' | 'h' = 'ns') =>
  decodeInfluxLineProtocol(body(text), { nowMs, precision });

describe('decodeInfluxLineProtocol', () => {
  it('names metrics <measurement>_<field>, takes host from the host tag and every tag as a label', () => {
    expect(
      decode('cpu,host=web-1,cpu=cpu-total usage_user=12.5,usage_system=3i 1750000000123456789'),
    ).toEqual({
      samples: [
        {
          host: 'web-1',
          timeMs: 1_750_000_000_123,
          metrics: { cpu_usage_user: 12.5, cpu_usage_system: 3 },
          tags: { cpu: 'cpu-total', host: 'web-1' },
        },
      ],
      accepted: 2,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });

  it('stores booleans as 1 and 0, unsigned as numbers, and skips string fields', () => {
    const decoded = decode('svc,host=h up=true,degraded=F,restarts=7u,version="1.2.3"');
    expect(decoded.samples[0]?.metrics).toEqual({ svc_up: 1, svc_degraded: 0, svc_restarts: 7 });
    expect(decoded.skipped).toEqual({ string_field: 1 });
  });

  it('stamps points without a timestamp with nowMs', () => {
    expect(decode('mem,host=h used=1').samples[0]?.timeMs).toBe(nowMs);
  });

  it('groups lines of the same host, time and tags, sorted tags or not', () => {
    const decoded = decode('a,host=h,x=1,y=2 v=1 1000000\nb,y=2,host=h,x=1 v=2 1000000');
    expect(decoded.samples).toEqual([
      { host: 'h', timeMs: 1, metrics: { a_v: 1, b_v: 2 }, tags: { host: 'h', x: '1', y: '2' } },
    ]);
  });

  it('counts points without a host tag and keeps series of different tag sets apart', () => {
    const decoded = decode(
      'disk,host=h,path=/ used=1 1000000\ndisk,host=h,path=/var used=2 1000000\ndisk,path=/ used=3',
    );
    expect(decoded.rejected).toEqual({ no_host: 1 });
    expect(decoded.accepted).toBe(2);
  });

  it('rewrites characters of measurements and fields that /ingest refuses', () => {
    expect(decode('my\\ app,host=h req/s=4').samples[0]?.metrics).toEqual({ my_app_req_s: 4 });
  });

  it('throws a LineProtocolSyntaxError naming the line that does not parse', () => {
    expect(() => decode('cpu,host=h v=1\ncpu,host=h v=\n')).toThrow(LineProtocolSyntaxError);
    expect(() => decode('cpu,host=h v=1\ncpu,host=h v=\n')).toThrow(/^line 2: /);
  });

  it.each([
    ['ns', '1750000000123456789', 1_750_000_000_123],
    ['us', '1750000000123456', 1_750_000_000_123],
    ['ms', '1750000000123', 1_750_000_000_123],
    ['s', '1750000000', 1_750_000_000_000],
    ['m', '29166666', 1_749_999_960_000],
    ['h', '486111', 1_749_999_600_000],
  ] as const)('reads timestamps in %s', (precision, timestamp, timeMs) => {
    expect(decode(`m,host=h v=1 ${timestamp}`, precision).samples[0]?.timeMs).toBe(timeMs);
  });

  it('counts timestamps beyond the range of a date', () => {
    expect(decode('m,host=h v=1 9223372036854775807', 's').rejected).toEqual({
      invalid_timestamp: 1,
    });
  });
});

describe('influxTimestampToMs', () => {
  it('floors sub-millisecond precisions, negative times included', () => {
    expect(influxTimestampToMs('1999999', 'ns')).toBe(1);
    expect(influxTimestampToMs('999999', 'ns')).toBe(0);
    expect(influxTimestampToMs('-1', 'ns')).toBe(-1);
    expect(influxTimestampToMs('-1000000', 'ns')).toBe(-1);
    expect(influxTimestampToMs('-1000001', 'ns')).toBe(-2);
    expect(influxTimestampToMs('-0', 'ns')).toBe(0);
    expect(influxTimestampToMs('-1500', 'us')).toBe(-2);
  });

  it('is exact where a number would round: 9007199254740993 ns', () => {
    expect(influxTimestampToMs('9007199254740993123', 'ns')).toBe(9_007_199_254_740);
  });
});

describe('parseInfluxPrecision', () => {
  it('defaults to nanoseconds', () => {
    expect(parseInfluxPrecision(undefined, 'v2')).toBe('ns');
    expect(parseInfluxPrecision('', 'v1')).toBe('ns');
  });

  it('takes ns, us, ms and s on v2 only', () => {
    expect(['ns', 'us', 'ms', 's'].map((p) => parseInfluxPrecision(p, 'v2'))).toEqual([
      'ns',
      'us',
      'ms',
      's',
    ]);
    expect(['n', 'u', 'm', 'h', 'S', 'toString'].map((p) => parseInfluxPrecision(p, 'v2'))).toEqual(
      [undefined, undefined, undefined, undefined, undefined, undefined],
    );
  });

  it('also takes n, u, m and h on v1', () => {
    expect(
      ['n', 'u', 'ms', 's', 'm', 'h', 'ns', 'us'].map((p) => parseInfluxPrecision(p, 'v1')),
    ).toEqual(['ns', 'us', 'ms', 's', 'm', 'h', 'ns', 'us']);
    expect(parseInfluxPrecision('d', 'v1')).toBeUndefined();
  });
});
