import protojson from 'protobufjs/ext/protojson.js';
import type { DecodeOptions, DecodedHostSamples } from './decoded-host-samples.js';
import type { Int64 } from './int64.js';
import { int64ToDecimal, int64ToNumber, unixNanosToMs } from './int64.js';
import type { AgentProtocol } from './protocol-decode-error.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { decodeMessage, otlpMetricsTypes } from './proto-types.js';
import type { ExponentialHistogramPoint } from './native-histogram.js';
import { defaultMaxHistogramBuckets, histogramFromOtlpExponential } from './native-histogram.js';
import type { FlatTags, SampleCollector } from './sample-collector.js';
import {
  createSampleCollector,
  exemplarLabelsMaxLength,
  flattenTags,
  labelsLength,
} from './sample-collector.js';

/*
 * The fields of ExportMetricsServiceRequest this decoder reads. Decoded protobuf puts defaults
 * on the prototype and present fields on the message itself; ProtoJSON leaves absent fields
 * undefined. Presence is therefore read with `Object.hasOwn`, and every field may be missing.
 */
type KeyValue = {
  key?: string | null;
  value?: {
    stringValue?: string | null;
    intValue?: Int64 | null;
    boolValue?: boolean | null;
  } | null;
};
type PointBase = {
  attributes?: KeyValue[] | null;
  timeUnixNano?: Int64 | null;
  flags?: number | null;
};
type Exemplar = {
  filteredAttributes?: KeyValue[] | null;
  timeUnixNano?: Int64 | null;
  asDouble?: number | null;
  asInt?: Int64 | null;
  spanId?: ArrayLike<number> | null;
  traceId?: ArrayLike<number> | null;
};
type NumberDataPoint = PointBase & {
  asDouble?: number | null;
  asInt?: Int64 | null;
  exemplars?: Exemplar[] | null;
};
type CountAndSumPoint = PointBase & { count?: Int64 | null; sum?: number | null };
type Points<P> = { dataPoints?: P[] | null } | null | undefined;
type ExponentialPoint = CountAndSumPoint & ExponentialHistogramPoint;
type Metric = {
  name?: string | null;
  gauge?: Points<NumberDataPoint>;
  sum?: (Points<NumberDataPoint> & { isMonotonic?: boolean | null }) | null;
  histogram?: Points<CountAndSumPoint>;
  exponentialHistogram?:
    (Points<ExponentialPoint> & { aggregationTemporality?: number | null }) | null;
  summary?: Points<CountAndSumPoint>;
};
type ExportMetricsServiceRequest = {
  resourceMetrics?:
    | {
        resource?: { attributes?: KeyValue[] | null } | null;
        scopeMetrics?: { metrics?: Metric[] | null }[] | null;
      }[]
    | null;
};

/** DataPointFlags.DATA_POINT_FLAGS_NO_RECORDED_VALUE_MASK: the series went stale. */
const noRecordedValue = 1;

/** AggregationTemporality.AGGREGATION_TEMPORALITY_DELTA. */
const deltaTemporality = 1;

/** Resource attributes that name the host, in order of preference (the contract's). */
const hostAttributes = ['host.name', 'service.instance.id', 'service.name'];

/**
 * OTLP/HTTP metrics, protobuf encoding: an `ExportMetricsServiceRequest` (any HTTP
 * Content-Encoding already undone). Throws `ProtocolDecodeError` when it is not one.
 */
export function decodeOtlpMetricsProtobuf(
  body: Uint8Array,
  options: DecodeOptions,
): DecodedHostSamples {
  const protocol = 'otlp_metrics_protobuf';
  const input = new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  const request = decodeMessage<ExportMetricsServiceRequest>(
    otlpMetricsTypes().request,
    input,
    protocol,
  );
  return collectRequest(request, options);
}

/**
 * OTLP/HTTP metrics, JSON encoding (ProtoJSON with OTLP's rules: lowerCamelCase keys, 64-bit
 * integers as strings or numbers, enums as integers; unknown fields are ignored, as the OTLP
 * spec asks of receivers). Throws `ProtocolDecodeError` when it is not such a document.
 */
export function decodeOtlpMetricsJson(
  body: Uint8Array,
  options: DecodeOptions,
): DecodedHostSamples {
  const protocol = 'otlp_metrics_json';
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    throw malformed(protocol, 'The body is not valid JSON.', err);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    throw malformed(protocol, 'The body must be a JSON object (an ExportMetricsServiceRequest).');
  }
  bytesFromHex(json);
  let request: ExportMetricsServiceRequest;
  try {
    request = protojson.fromJson(otlpMetricsTypes().request, json, {
      ignoreUnknownFields: true,
    }) as unknown as ExportMetricsServiceRequest;
  } catch (err) {
    const detail = err instanceof Error ? err.message : String(err);
    throw malformed(
      protocol,
      `The body is not a valid ExportMetricsServiceRequest: ${detail}.`,
      err,
    );
  }
  return collectRequest(request, options);
}

/**
 * OTLP's JSON writes trace and span ids as hex, where ProtoJSON reads bytes as base64: the ids
 * of the number points' exemplars are rewritten in place (anything unexpected is left for the
 * decoder to judge).
 */
function bytesFromHex(request: object): void {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  const field = (value: unknown, name: string): unknown =>
    typeof value === 'object' && value !== null
      ? (value as Record<string, unknown>)[name]
      : undefined;
  for (const resource of list(field(request, 'resourceMetrics'))) {
    for (const scope of list(field(resource, 'scopeMetrics'))) {
      for (const metric of list(field(scope, 'metrics'))) {
        for (const kind of ['gauge', 'sum']) {
          for (const point of list(field(field(metric, kind), 'dataPoints'))) {
            for (const exemplar of list(field(point, 'exemplars'))) {
              const ids = exemplar as Record<string, unknown>;
              for (const id of ['traceId', 'spanId']) {
                const text = ids[id];
                if (typeof text === 'string' && /^(?:[0-9a-fA-F]{2})*$/.test(text)) {
                  ids[id] = Buffer.from(text, 'hex').toString('base64');
                }
              }
            }
          }
        }
      }
    }
  }
}

function malformed(protocol: AgentProtocol, message: string, cause?: unknown): ProtocolDecodeError {
  return new ProtocolDecodeError('malformed_body', protocol, message, { cause });
}

function stringAttributes(attributes: KeyValue[] | null | undefined): [string, string][] {
  const pairs: [string, string][] = [];
  for (const attribute of attributes ?? []) {
    const value = attribute.value;
    if (
      value != null &&
      Object.hasOwn(value, 'stringValue') &&
      typeof value.stringValue === 'string'
    ) {
      pairs.push([attribute.key ?? '', value.stringValue]);
    }
  }
  return pairs;
}

/**
 * An exemplar's filtered attributes as labels: strings, integers and booleans as Prometheus'
 * translation writes them (`AsString`); other types (doubles, lists, maps, bytes) are left out.
 */
function exemplarAttributes(attributes: KeyValue[] | null | undefined): [string, string][] {
  const pairs: [string, string][] = [];
  for (const attribute of attributes ?? []) {
    const value = attribute.value;
    if (value == null) continue;
    const key = attribute.key ?? '';
    if (Object.hasOwn(value, 'stringValue') && typeof value.stringValue === 'string') {
      pairs.push([key, value.stringValue]);
    } else if (Object.hasOwn(value, 'intValue')) {
      pairs.push([key, int64ToDecimal(value.intValue)]);
    } else if (Object.hasOwn(value, 'boolValue') && typeof value.boolValue === 'boolean') {
      pairs.push([key, String(value.boolValue)]);
    }
  }
  return pairs;
}

/** Point attributes win over resource attributes of the same key. */
function mergeTags(resource: ReadonlyMap<string, string>, point: [string, string][]): string[] {
  const merged = new Map<string, string>(resource);
  for (const [key, value] of point) merged.set(key, value);
  return flattenTags([...merged]);
}

/**
 * Mapping (docs/api.md#agent-protocols): host = resource attribute `host.name`, else
 * `service.instance.id`, else `service.name`; metric = the OTLP name (rewritten only where
 * /ingest's pattern refuses it); gauge and sum points → one value; histogram, exponential
 * histogram and summary points → `<name>_count` and, when present, `<name>_sum`; an exponential
 * histogram point also → a native histogram `<name>`, as Prometheus' OTLP translation converts
 * it (native-histogram.ts); resource and point attributes of string type → tags. A monotonic sum
 * point's exemplars go with its series as Prometheus' OTLP translation makes them (labels
 * `trace_id` and `span_id` in hex where set, and the filtered attributes); the buckets of
 * explicit-bucket histograms, and the exemplars of histograms, are not stored.
 */
function collectRequest(
  request: ExportMetricsServiceRequest,
  options: DecodeOptions,
): DecodedHostSamples {
  const collector = createSampleCollector(options);
  const maxHistogramBuckets = options.maxHistogramBuckets ?? defaultMaxHistogramBuckets;
  for (const resourceMetrics of request.resourceMetrics ?? []) {
    const resourcePairs = stringAttributes(resourceMetrics.resource?.attributes);
    const resourceTags = new Map(resourcePairs);
    const host = hostAttributes.map((key) => resourceTags.get(key)).find((value) => !!value);
    const resource = flattenTags([...resourceTags]);
    const target: PointTarget = { collector, host, resourceTags, resource, maxHistogramBuckets };
    for (const scopeMetrics of resourceMetrics.scopeMetrics ?? []) {
      for (const metric of scopeMetrics.metrics ?? []) collectMetric(target, metric);
    }
  }
  return collector.result();
}

type PointTarget = {
  collector: SampleCollector;
  host: string | undefined;
  resourceTags: ReadonlyMap<string, string>;
  /** The resource's tags, flat and sorted: the tags of points without string attributes. */
  resource: FlatTags;
  maxHistogramBuckets: number;
};

function collectMetric(target: PointTarget, metric: Metric): void {
  const name = metric.name ?? '';
  for (const points of [metric.gauge, metric.sum]) {
    for (const point of points?.dataPoints ?? []) {
      if (((point.flags ?? 0) & noRecordedValue) !== 0) {
        target.collector.skip('no_recorded_value');
      } else if (Object.hasOwn(point, 'asDouble') && typeof point.asDouble === 'number') {
        addPoint(target, point, name, point.asDouble);
      } else if (Object.hasOwn(point, 'asInt')) {
        addPoint(target, point, name, int64ToNumber(point.asInt));
      } else {
        target.collector.skip('no_value');
      }
      // Prometheus' translation keeps exemplars of monotonic sums (counters) only.
      if (points === metric.sum && metric.sum?.isMonotonic === true) {
        for (const exemplar of point.exemplars ?? []) addExemplar(target, point, name, exemplar);
      }
    }
  }
  for (const points of [metric.histogram, metric.exponentialHistogram, metric.summary]) {
    for (const point of points?.dataPoints ?? []) {
      if (((point.flags ?? 0) & noRecordedValue) !== 0) {
        target.collector.skip('no_recorded_value');
        continue;
      }
      addPoint(target, point, `${name}_count`, int64ToNumber(point.count));
      // Optional in histograms (absent when observations can be negative); always in summaries.
      const sum = point.sum ?? (points === metric.summary ? 0 : undefined);
      if (typeof sum === 'number') addPoint(target, point, `${name}_sum`, sum);
    }
  }
  const exponential = metric.exponentialHistogram;
  const delta = exponential?.aggregationTemporality === deltaTemporality;
  for (const point of exponential?.dataPoints ?? []) {
    // Counted once, as skipped, above.
    if (((point.flags ?? 0) & noRecordedValue) !== 0) continue;
    const histogram = histogramFromOtlpExponential(point, {
      delta,
      maxBuckets: target.maxHistogramBuckets,
    });
    if ('refused' in histogram) target.collector.reject('invalid_histogram');
    else {
      target.collector.addHistogram(
        target.host,
        timeOf(point.timeUnixNano),
        tagsOf(target, point),
        name,
        histogram,
      );
    }
  }
}

function tagsOf(target: PointTarget, point: PointBase): FlatTags {
  const pointPairs = stringAttributes(point.attributes);
  return pointPairs.length > 0 ? mergeTags(target.resourceTags, pointPairs) : target.resource;
}

/** time_unix_nano is required; 0 is "not set", not 1970. */
function timeOf(timeUnixNano: Int64 | null | undefined): number {
  const timeMs = unixNanosToMs(timeUnixNano);
  return timeMs === 0 ? Number.NaN : timeMs;
}

function addPoint(target: PointTarget, point: PointBase, metric: string, value: number): void {
  target.collector.add(
    target.host,
    timeOf(point.timeUnixNano),
    tagsOf(target, point),
    metric,
    value,
  );
}

function addExemplar(
  target: PointTarget,
  point: PointBase,
  metric: string,
  exemplar: Exemplar,
): void {
  const labels: [string, string][] = [];
  // An absent id decodes to protobufjs' default, an empty array.
  const hex = (id: ArrayLike<number> | null | undefined): string =>
    id == null || id.length === 0 ? '' : Buffer.from(Array.from(id)).toString('hex');
  const traceId = hex(exemplar.traceId);
  const spanId = hex(exemplar.spanId);
  if (traceId !== '') labels.push(['trace_id', traceId]);
  if (spanId !== '') labels.push(['span_id', spanId]);
  // As Prometheus translates them: the filtered attributes as strings, only where all of them fit
  // its bound.
  const attributes = exemplarAttributes(exemplar.filteredAttributes);
  if (labelsLength(labels) + labelsLength(attributes) <= exemplarLabelsMaxLength) {
    labels.push(...attributes);
  }
  const value = Object.hasOwn(exemplar, 'asInt')
    ? int64ToNumber(exemplar.asInt)
    : (exemplar.asDouble ?? 0);
  const timeMs = timeOf(exemplar.timeUnixNano);
  target.collector.addExemplar(target.host, timeMs, tagsOf(target, point), metric, value, labels);
}
