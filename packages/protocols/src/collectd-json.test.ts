import { describe, expect, it } from 'vitest';
import { decodeCollectdJson } from './collectd-json.js';

const options = { nowMs: 1_750_000_000_000 };
const body = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

/** A value list as collectd's write_http plugin writes it (Format "JSON"). */
const valueList = (overrides: Record<string, unknown>) => ({
  values: [42],
  dstypes: ['gauge'],
  dsnames: ['value'],
  time: 1_750_000_000.123,
  interval: 10,
  host: 'db-1',
  plugin: 'load',
  plugin_instance: '',
  type: 'load',
  type_instance: '',
  ...overrides,
});

describe('decodeCollectdJson', () => {
  it('names a single-value list collectd_<plugin>_<type>, labelled by its host', () => {
    expect(decodeCollectdJson(body([valueList({})]), options)).toEqual({
      samples: [
        {
          host: 'db-1',
          timeMs: 1_750_000_000_123,
          metrics: { collectd_load_load: 42 },
          tags: { host: 'db-1' },
        },
      ],
      accepted: 1,
      exemplars: 0,
      histograms: 0,
      rejected: {},
      skipped: {},
    });
  });

  it('adds the plugin and type instances when present', () => {
    const list = valueList({
      plugin: 'cpu',
      plugin_instance: '0',
      type: 'percent',
      type_instance: 'idle',
    });
    expect(decodeCollectdJson(body([list]), options).samples[0]?.metrics).toEqual({
      collectd_cpu_0_percent_idle: 42,
    });
  });

  it('adds the data-source name when a list has more than one value', () => {
    const list = valueList({
      plugin: 'interface',
      plugin_instance: 'eth0',
      type: 'if_octets',
      values: [100, 200],
      dstypes: ['derive', 'derive'],
      dsnames: ['rx', 'tx'],
    });
    expect(decodeCollectdJson(body([list]), options).samples[0]?.metrics).toEqual({
      collectd_interface_eth0_if_octets_rx: 100,
      collectd_interface_eth0_if_octets_tx: 200,
    });
  });

  it('groups lists of the same host and time, and rewrites characters /ingest refuses', () => {
    const lists = [
      valueList({
        plugin: 'df',
        plugin_instance: 'root',
        type: 'df_complex',
        type_instance: 'used',
      }),
      valueList({
        plugin: 'disk',
        plugin_instance: 'sda/1',
        type: 'disk_ops',
        values: [1, 2],
        dstypes: ['derive', 'derive'],
        dsnames: ['read', 'write'],
      }),
    ];
    expect(decodeCollectdJson(body(lists), options).samples).toEqual([
      {
        host: 'db-1',
        timeMs: 1_750_000_000_123,
        metrics: {
          collectd_df_root_df_complex_used: 42,
          collectd_disk_sda_1_disk_ops_read: 1,
          collectd_disk_sda_1_disk_ops_write: 2,
        },
        tags: { host: 'db-1' },
      },
    ]);
  });

  it('skips the nulls collectd writes for NaN gauges', () => {
    const decoded = decodeCollectdJson(
      body([valueList({ values: [null, 1], dstypes: ['gauge', 'gauge'], dsnames: ['a', 'b'] })]),
      options,
    );
    expect(decoded.skipped).toEqual({ no_value: 1 });
    expect(decoded.samples[0]?.metrics).toEqual({ collectd_load_load_b: 1 });
  });

  it('counts an empty host like any protocol', () => {
    expect(decodeCollectdJson(body([valueList({ host: '' })]), options).rejected).toEqual({
      no_host: 1,
    });
  });

  it.each([
    ['not JSON', 'nope', 'The body is not valid JSON.'],
    ['an object', '{}', 'The body is not an array of collectd value lists: body: '],
    [
      'a list without values',
      JSON.stringify([valueList({ values: [] })]),
      'The body is not an array of collectd value lists: [0].values: ',
    ],
    [
      'names that do not match the values',
      JSON.stringify([valueList({ dsnames: ['a', 'b'] })]),
      'The body is not an array of collectd value lists: [0].dsnames: dsnames must name each of the values.',
    ],
    [
      'a string value',
      JSON.stringify([valueList({}), valueList({ values: ['1'] })]),
      'The body is not an array of collectd value lists: [1].values[0]: ',
    ],
  ])('throws a malformed_body error for %s', (_case, text, message) => {
    expect(() => decodeCollectdJson(new TextEncoder().encode(text), options)).toThrow(
      expect.objectContaining({
        code: 'malformed_body',
        protocol: 'collectd_json',
        message: expect.stringContaining(message),
      }),
    );
  });
});
