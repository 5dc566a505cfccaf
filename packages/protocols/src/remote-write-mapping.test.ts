import { ingestLimits, isStorableText } from '@monitor/schemas';
import fc from 'fast-check';
import { compressSync as compress } from 'snappy';
import { describe, expect, it } from 'vitest';
import type { DecodedHostSamples, ProtocolSample, RejectReason } from './decoded-host-samples.js';
import { toMetricName } from './metric-name.js';
import { hostOfInstance, isStaleMarker } from './prometheus-series.js';
import { remoteWriteTypes } from './proto-types.js';
import { decodeRemoteWriteV1 } from './remote-write-v1.js';
import { decodeRemoteWriteV2 } from './remote-write-v2.js';
import { createSymbolTable } from './testing/symbol-table.js';

/**
 * The remote-write mapping (labels → host, metric, tags; the collector's checks, grouping, one
 * point per series and time, staleness markers, exemplars, native histograms, the split at the
 * /ingest limit)
 * against a reference written for clarity, on generated bodies decoded by both protocol
 * versions.
 */

const t0 = 1_750_000_000_000;
const options = { nowMs: t0, maxDecodedBytes: 50_000_000 };

type Label = { name: string; value: string };
type GeneratedExemplar = { labels: Label[]; value: number; timestamp: number };
/** An integer native histogram as sent: sound, ended (its sum a staleness marker) or refused. */
type GeneratedHistogram = {
  countInt: number;
  sum: number;
  schema: number;
  zeroThreshold: number;
  zeroCountInt: number;
  positiveSpans: { offset: number; length: number }[];
  positiveDeltas: number[];
  timestamp: number;
};
type GeneratedSeries = {
  labels: Label[];
  samples: { value: number; timestamp: number }[];
  exemplars?: GeneratedExemplar[];
  histograms?: GeneratedHistogram[];
};

function staleMarker(): number {
  const view = new DataView(new ArrayBuffer(8));
  view.setUint32(0, 2, true);
  view.setUint32(4, 0x7ff00000, true);
  return view.getFloat64(0, true);
}

const labelName = fc.constantFrom(
  'host',
  'instance',
  'job',
  'le',
  'a',
  '',
  '__proto__',
  'k'.repeat(ingestLimits.maxTagKeyLength + 1),
);
const labelValue = fc.constantFrom(
  '',
  'node-1:9100',
  'node-1',
  'node-2',
  '[::1]:9100',
  '10.0.0.17:9100',
  'x',
  'nul\u0000',
  'v'.repeat(ingestLimits.maxTagValueLength + 1),
  `${'h'.repeat(ingestLimits.maxHostLength + 1)}:9100`,
);
const metricName = fc.constantFrom(
  'm',
  'm_total',
  'a/b',
  'a_b',
  '1x',
  '',
  '__proto__',
  'n'.repeat(129),
);
const sampleValue = fc.constantFrom(
  1,
  2.5,
  -3,
  0,
  Number.NaN,
  staleMarker(),
  Number.POSITIVE_INFINITY,
  1e101,
);
const sampleTime = fc.constantFrom(t0, t0 + 15_000, 9e15, -1);
/** Exemplar labels: a trace id, empty or odd names, text storage refuses, past 128 characters. */
const exemplarLabel = fc.record({
  name: fc.constantFrom('trace_id', 'span_id', '', '__proto__', 'nul\u0000'),
  value: fc.constantFrom('4bf92f3577b34da6a3ce929d0e0e4736', '', 'x'.repeat(100), 'y'.repeat(120)),
});
const exemplar: fc.Arbitrary<GeneratedExemplar> = fc.record({
  labels: fc.array(exemplarLabel, { maxLength: 3 }),
  value: sampleValue,
  timestamp: sampleTime,
});

/** Buckets [count, 1] at indexes 0 and 1; schema 9 is one Prometheus has no layout for. */
const histogram: fc.Arbitrary<GeneratedHistogram> = fc
  .record({
    kind: fc.constantFrom('sound', 'sound', 'ended', 'schema 9'),
    count: fc.nat(5),
    timestamp: sampleTime,
  })
  .map(({ kind, count, timestamp }) => ({
    countInt: count + 1,
    sum: kind === 'ended' ? staleMarker() : 1.5,
    schema: kind === 'schema 9' ? 9 : 0,
    zeroThreshold: 1e-128,
    zeroCountInt: 0,
    positiveSpans: [{ offset: 0, length: 2 }],
    positiveDeltas: [count, 1 - count],
    timestamp,
  }));

/** A series: labels in any order (repeated names, empty values), `__name__` anywhere or absent. */
const series: fc.Arbitrary<GeneratedSeries> = fc
  .record({
    labels: fc.array(fc.record({ name: labelName, value: labelValue }), { maxLength: 5 }),
    name: fc.option(metricName, { nil: undefined }),
    namePosition: fc.nat(),
    wideTags: fc.constantFrom(0, 0, 0, ingestLimits.maxTags - 1, ingestLimits.maxTags + 1),
    samples: fc.array(fc.record({ value: sampleValue, timestamp: sampleTime }), {
      minLength: 1,
      maxLength: 3,
    }),
    exemplars: fc.array(exemplar, { maxLength: 2 }),
    histograms: fc.array(histogram, { maxLength: 2 }),
  })
  .map(({ labels, name, namePosition, wideTags, samples, exemplars, histograms }) => {
    const all = [...labels];
    for (let i = 0; i < wideTags; i++) all.push({ name: `w${i}`, value: 'w' });
    if (name !== undefined)
      all.splice(namePosition % (all.length + 1), 0, { name: '__name__', value: name });
    return { labels: all, samples, exemplars, histograms };
  });

/**
 * Many series of one host, time and tag set: up to a sample split at the /ingest limit, maybe a
 * staleness marker among them, then a second point of two of those series.
 */
const bulk = fc
  .record({
    count: fc.constantFrom(
      0,
      0,
      ingestLimits.maxMetricsPerPayload - 1,
      ingestLimits.maxMetricsPerPayload + 2,
    ),
    staleAt: fc.constantFrom(3, undefined),
  })
  .map(({ count, staleAt }) => {
    const point = (name: string, value: number): GeneratedSeries => ({
      labels: [
        { name: '__name__', value: name },
        { name: 'instance', value: 'node-1:9100' },
      ],
      samples: [{ value, timestamp: t0 }],
    });
    const all = Array.from({ length: count }, (_, i) =>
      point(`bulk_${i}`, i === staleAt ? staleMarker() : i),
    );
    if (count > 0) all.push(point('bulk_3', 1), point('bulk_5', 1));
    return all;
  });

const body = fc
  .tuple(fc.array(series, { maxLength: 25 }), bulk, fc.array(series, { maxLength: 25 }))
  .map(([before, many, after]) => [...before, ...many, ...after]);

function v1Body(all: GeneratedSeries[]): Uint8Array {
  const type = remoteWriteTypes().writeRequest;
  return compress(type.encode(type.fromObject({ timeseries: all })).finish());
}

function v2Body(all: GeneratedSeries[]): Uint8Array {
  const { symbols, refOf } = createSymbolTable();
  const refsOf = (labels: Label[]) =>
    labels.flatMap((label) => [refOf(label.name), refOf(label.value)]);
  const timeseries = all.map((s) => ({
    labelsRefs: refsOf(s.labels),
    samples: s.samples,
    exemplars: (s.exemplars ?? []).map((e) => ({
      labelsRefs: refsOf(e.labels),
      value: e.value,
      timestamp: e.timestamp,
    })),
    histograms: s.histograms ?? [],
  }));
  const type = remoteWriteTypes().writeV2Request;
  return compress(type.encode(type.fromObject({ symbols, timeseries })).finish());
}

function tagProblem(pairs: [string, string][]): RejectReason | undefined {
  for (const [key, value] of pairs) {
    if (key === '' || key === '__proto__') return 'invalid_tag_key';
    if (key.length > ingestLimits.maxTagKeyLength) return 'tag_key_too_long';
    if (value.length > ingestLimits.maxTagValueLength) return 'tag_value_too_long';
    if (!isStorableText(key) || !isStorableText(value)) return 'unstorable_text';
  }
  if (new Set(pairs.map(([key]) => key)).size > ingestLimits.maxTags) return 'too_many_tags';
  return undefined;
}

/** The mapping as the contract states it, one point at a time, with string keys. */
function referenceDecode(all: GeneratedSeries[]): DecodedHostSamples {
  const decoded: ProtocolSample[] = [];
  const rejected: Partial<Record<RejectReason, number>> = {};
  const reject = (reason: RejectReason) => {
    rejected[reason] = (rejected[reason] ?? 0) + 1;
  };
  const groups = new Map<string, { sample: ProtocolSample; size: number; taken: Set<string> }>();
  let accepted = 0;
  let exemplars = 0;
  let histograms = 0;
  for (const {
    labels,
    samples,
    exemplars: seriesExemplars = [],
    histograms: seriesHistograms = [],
  } of all) {
    // The series' samples, then its exemplars, then its histograms.
    const points: {
      value: number;
      timestamp: number;
      exemplar: Label[] | undefined;
      histogram?: GeneratedHistogram;
    }[] = [
      ...samples.map((point) => ({ ...point, exemplar: undefined })),
      ...seriesExemplars.map((point) => ({ ...point, exemplar: point.labels })),
      ...seriesHistograms.map((h) => ({
        value: h.sum,
        timestamp: h.timestamp,
        exemplar: undefined,
        histogram: h,
      })),
    ];
    let metric: string | undefined;
    let hostLabel: string | undefined;
    let instance: string | undefined;
    let job: string | undefined;
    const pairs: [string, string][] = [];
    for (const { name, value } of labels) {
      if (name === '__name__') metric = value;
      else if (value !== '') {
        if (name === 'host') hostLabel = value;
        if (name === 'instance') instance = value;
        if (name === 'job') job = value;
        pairs.push([name, value]);
      }
    }
    // Stable: labels of one name keep their order.
    pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    // Neither `host` nor `instance`: the service of its job, else the organization's one.
    const host =
      hostLabel ??
      (instance === undefined ? undefined : hostOfInstance(instance)) ??
      job ??
      'remote-write';
    for (const { value, timestamp, exemplar, histogram: sent } of points) {
      if (metric === undefined || metric === '') {
        reject('no_metric_name');
        continue;
      }
      if (sent !== undefined && sent.schema > 8) {
        reject('invalid_histogram');
        continue;
      }
      const exemplarLabels = exemplar === undefined ? undefined : referenceExemplarLabels(exemplar);
      if (exemplarLabels === null) {
        reject('invalid_exemplar');
        continue;
      }
      const stale = isStaleMarker(value);
      if (!Number.isSafeInteger(timestamp) || Math.abs(timestamp) > 8.64e15) {
        reject('invalid_timestamp');
        continue;
      }
      if (host === undefined || host === '') {
        reject('no_host');
        continue;
      }
      if (host.length > ingestLimits.maxHostLength) {
        reject('host_too_long');
        continue;
      }
      if (!isStorableText(host)) {
        reject('unstorable_text');
        continue;
      }
      const name = toMetricName(metric);
      if (!name.ok) {
        reject(name.reason);
        continue;
      }
      const problem = tagProblem(pairs);
      if (problem !== undefined) {
        reject(problem);
        continue;
      }
      const key = JSON.stringify([host, timestamp, pairs]);
      let group = groups.get(key);
      if (group === undefined) {
        const tags = Object.fromEntries(pairs);
        group = {
          sample: { host, timeMs: timestamp, metrics: {}, tags },
          size: 0,
          taken: new Set(),
        };
        groups.set(key, group);
      }
      if (exemplarLabels === undefined) {
        if (group.taken.has(name.name)) {
          reject('duplicate_series_time');
          continue;
        }
        group.taken.add(name.name);
      }
      if (group.size === ingestLimits.maxMetricsPerPayload) {
        group.sample = { ...group.sample, metrics: {}, tags: { ...group.sample.tags } };
        delete group.sample.staleMetrics;
        delete group.sample.exemplars;
        delete group.sample.histograms;
        group.size = 0;
      }
      if (group.size === 0) decoded.push(group.sample);
      group.size += 1;
      if (exemplarLabels !== undefined) {
        exemplars += 1;
        (group.sample.exemplars ??= []).push({ metric: name.name, value, labels: exemplarLabels });
      } else if (sent !== undefined && !stale) {
        histograms += 1;
        (group.sample.histograms ??= {})[name.name] = {
          integer: true,
          schema: sent.schema,
          zeroThreshold: sent.zeroThreshold,
          zeroCount: sent.zeroCountInt,
          count: sent.countInt,
          sum: sent.sum,
          positiveSpans: sent.positiveSpans,
          positiveBuckets: [sent.positiveDeltas[0]!, 1],
          negativeSpans: [],
          negativeBuckets: [],
          counterResetHint: 'unknown',
          customValues: [],
        };
      } else {
        accepted += 1;
        if (stale) (group.sample.staleMetrics ??= []).push(name.name);
        else group.sample.metrics[name.name] = value;
      }
    }
  }
  return { samples: decoded, accepted, exemplars, histograms, rejected, skipped: {} };
}

/**
 * An exemplar's labels as Prometheus keeps them (no empty name or value; `__proto__` is no label
 * here either), or null where it refuses them: more than 128 characters in all, or text storage
 * cannot hold.
 */
function referenceExemplarLabels(labels: Label[]): Record<string, string> | null {
  const kept = labels.filter(
    ({ name, value }) => name !== '' && value !== '' && name !== '__proto__',
  );
  if (kept.some(({ name, value }) => !isStorableText(name) || !isStorableText(value))) return null;
  const length = kept.reduce((n, { name, value }) => n + [...name].length + [...value].length, 0);
  return length > 128 ? null : Object.fromEntries(kept.map(({ name, value }) => [name, value]));
}

describe('the remote-write mapping', () => {
  it('decodes generated 1.0 and 2.0 bodies as the reference does', () => {
    fc.assert(
      fc.property(body, (all) => {
        const expected = referenceDecode(all);
        expect(decodeRemoteWriteV1(v1Body(all), options)).toEqual(expected);
        expect(decodeRemoteWriteV2(v2Body(all), options)).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
