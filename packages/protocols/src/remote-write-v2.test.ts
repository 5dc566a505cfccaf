import { compressSync as compress } from 'snappy';
import { describe, expect, it } from 'vitest';
import { remoteWriteTypes } from './proto-types.js';
import { decodeRemoteWriteV2 } from './remote-write-v2.js';
import { createSymbolTable } from './testing/symbol-table.js';

const options = { nowMs: 1_750_000_000_000, maxDecodedBytes: 10_000_000 };
const t0 = 1_750_000_000_000;

type Series = {
  labels: Record<string, string>;
  samples?: { value: number; timestamp: number }[];
  histograms?: object[];
  exemplars?: object[];
};

/** An io.prometheus.write.v2.Request with its symbols table built as a sender would. */
function requestBody(series: Series[]): Uint8Array {
  const { symbols, refOf } = createSymbolTable();
  const timeseries = series.map((s) => ({
    labelsRefs: Object.entries(s.labels)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .flatMap(([name, value]) => [refOf(name), refOf(value)]),
    samples: s.samples ?? [],
    histograms: s.histograms ?? [],
    exemplars: s.exemplars ?? [],
  }));
  return rawBody({ symbols, timeseries });
}

function rawBody(request: object): Uint8Array {
  const type = remoteWriteTypes().writeV2Request;
  return compress(type.encode(type.fromObject(request)).finish());
}

describe('decodeRemoteWriteV2', () => {
  it('resolves labels through the symbols table and maps them like 1.0', () => {
    const body = requestBody([
      {
        labels: { __name__: 'node_load1', instance: 'node-1:9100', job: 'node' },
        samples: [{ value: 0.25, timestamp: t0 }],
      },
      {
        labels: { __name__: 'node_load5', instance: 'node-1:9100', job: 'node' },
        samples: [{ value: 0.5, timestamp: t0 }],
      },
    ]);
    expect(decodeRemoteWriteV2(body, options)).toEqual({
      samples: [
        {
          host: 'node-1',
          timeMs: t0,
          metrics: { node_load1: 0.25, node_load5: 0.5 },
          tags: { instance: 'node-1:9100', job: 'node' },
        },
      ],
      accepted: 2,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });

  it('takes histograms beside the float samples and the exemplars', () => {
    const body = requestBody([
      {
        labels: { __name__: 'http_request_duration_seconds', host: 'h' },
        histograms: [
          { countInt: 4, sum: 2, timestamp: t0 },
          { countFloat: 1, sum: 1, timestamp: t0 + 1 },
        ],
      },
      {
        labels: { __name__: 'http_requests_total', host: 'h' },
        samples: [{ value: 12, timestamp: t0 }],
        exemplars: [{ labelsRefs: [], value: 1, timestamp: t0 }],
      },
    ]);
    const decoded = decodeRemoteWriteV2(body, options);
    expect(decoded).toMatchObject({ skipped: {}, accepted: 1, histograms: 2, exemplars: 1 });
    expect(
      decoded.samples.map((sample) => [
        sample.timeMs,
        Object.keys(sample.metrics),
        Object.entries(sample.histograms ?? {}).map(([name, h]) => [name, h.integer, h.count]),
      ]),
    ).toEqual([
      [t0, ['http_requests_total'], [['http_request_duration_seconds', true, 4]]],
      [t0 + 1, [], [['http_request_duration_seconds', false, 1]]],
    ]);
    expect(decoded.samples[0]?.exemplars).toEqual([
      { metric: 'http_requests_total', value: 1, labels: {} },
    ]);
  });

  it('keeps same-name series that differ only in tags apart', () => {
    const body = requestBody([
      { labels: { __name__: 'cpu', cpu: '0', host: 'h' }, samples: [{ value: 1, timestamp: t0 }] },
      { labels: { __name__: 'cpu', cpu: '1', host: 'h' }, samples: [{ value: 2, timestamp: t0 }] },
    ]);
    const decoded = decodeRemoteWriteV2(body, options);
    expect(decoded.rejected).toEqual({});
    expect(decoded.samples.map((s) => [s.tags['cpu'], s.metrics])).toEqual([
      ['0', { cpu: 1 }],
      ['1', { cpu: 2 }],
    ]);
  });

  it("resolves an exemplar's labels through the symbols table, and refuses a broken reference", () => {
    const symbols = ['', '__name__', 'up', 'host', 'h', 'trace_id', 'abc'];
    const series = { labelsRefs: [1, 2, 3, 4], samples: [{ value: 1, timestamp: t0 }] };
    const exemplar = { value: 2, timestamp: t0 + 1 };
    const decoded = decodeRemoteWriteV2(
      rawBody({
        symbols,
        timeseries: [{ ...series, exemplars: [{ ...exemplar, labelsRefs: [5, 6] }] }],
      }),
      options,
    );
    expect(decoded.samples[1]).toEqual({
      host: 'h',
      timeMs: t0 + 1,
      metrics: {},
      tags: { host: 'h' },
      exemplars: [{ metric: 'up', value: 2, labels: { trace_id: 'abc' } }],
    });
    for (const labelsRefs of [[5], [5, 9]]) {
      const body = rawBody({
        symbols,
        timeseries: [{ ...series, exemplars: [{ ...exemplar, labelsRefs }] }],
      });
      expect(() => decodeRemoteWriteV2(body, options)).toThrow(
        expect.objectContaining({ code: 'malformed_body' }),
      );
    }
  });

  it('refuses a label reference outside the symbols table', () => {
    const body = rawBody({
      symbols: ['', '__name__', 'up'],
      timeseries: [{ labelsRefs: [1, 7], samples: [{ value: 1, timestamp: t0 }] }],
    });
    expect(() => decodeRemoteWriteV2(body, options)).toThrow(
      expect.objectContaining({
        code: 'malformed_body',
        protocol: 'prometheus_remote_write_v2',
        message: 'timeseries[0] refers to symbol 7, but the symbols table has 3.',
      }),
    );
  });

  it('refuses an odd number of label references', () => {
    const body = rawBody({
      symbols: ['', '__name__', 'up'],
      timeseries: [{ labelsRefs: [1, 2, 1], samples: [{ value: 1, timestamp: t0 }] }],
    });
    expect(() => decodeRemoteWriteV2(body, options)).toThrow(
      expect.objectContaining({ code: 'malformed_body' }),
    );
  });

  it('refuses a bomb before decompressing', () => {
    const bomb = new Uint8Array([0xff, 0xff, 0xff, 0x7f, 0x00]);
    expect(() => decodeRemoteWriteV2(bomb, options)).toThrow(
      expect.objectContaining({ code: 'body_too_large', protocol: 'prometheus_remote_write_v2' }),
    );
  });
});
