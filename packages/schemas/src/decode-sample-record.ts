import type { DecodeResult } from './sample-message.js';
import { decodeSampleMessage } from './sample-message.js';
import { sampleRecordMessages } from './sample-record.js';
import { metricValueFromJson } from './metric-value-json.js';
import { decodeBinaryHostSample, isBinarySampleMessage } from './binary-sample-message.js';
import type { DecodedSample, SampleExemplar, SnapshotJson } from './decoded-sample.js';
import { maxHostNameLength } from './host-name.js';
import { decodeHistogram, HistogramChunkError } from './histogram-chunk.js';
import type { NativeHistogram } from './native-histogram.js';

/** One host of a record: its message as the record carried it, and what it decodes to. */
export type RecordHostSample = {
  /** The host's message alone: a format-1 record value (what a dead letter of it carries). */
  message: Buffer;
  /** Its place in the record, from 0. */
  index: number;
  /** The sample, or why this host's message is not one (its neighbours are unaffected). */
  decoded: DecodeResult<DecodedSample>;
};

/**
 * Decodes a record of the samples topic in either format (see sample-record.ts): the one
 * decoder of the writer and the evaluator. Fails as a whole only when the framing is broken;
 * a host message that does not decode is reported in its own entry.
 */
export function decodeSampleRecord(value: Buffer | null): DecodeResult<RecordHostSample[]> {
  const messages = sampleRecordMessages(value);
  if (!messages.ok) return messages;
  return {
    ok: true,
    value: messages.value.map((message, index) => ({
      message,
      index,
      decoded: decodeHostSample(message),
    })),
  };
}

/** Decodes a record of the samples topic: `decodeSampleRecord`, or one that shares its results. */
export type SampleRecordDecoder = (value: Buffer | null) => DecodeResult<RecordHostSample[]>;

/**
 * `decodeSampleRecord` for consumers that get the same record values (role `all`: the in-process
 * bus hands every consumer group the publisher's buffers): a value decoded once is not decoded
 * again while it is alive (kept by the value, weakly). The results are shared, so they are
 * read-only, as every consumer treats them.
 */
export function createSharedSampleRecordDecoder(): SampleRecordDecoder {
  const decoded = new WeakMap<Buffer, DecodeResult<RecordHostSample[]>>();
  return (value) => {
    if (value === null) return decodeSampleRecord(value);
    let result = decoded.get(value);
    if (result === undefined) {
      result = decodeSampleRecord(value);
      decoded.set(value, result);
    }
    return result;
  };
}

/**
 * Decodes one host sample message (a record of one host), binary (`encodeBinarySampleMessage`)
 * or JSON. Of a JSON message the containers and processes (about nine tenths of a spec-shaped
 * message) are neither parsed nor validated again: the gateway validated them against the same schema before publishing, so
 * their JSON text is passed on to storage as it is, and the evaluator never reads them. The rest
 * is checked by hand against the rules of `sampleMessageSchema`.
 *
 * Anything unusual (not one flat JSON object, escaped or repeated keys, a field the hand checks
 * reject) goes the slow way, `decodeSampleMessage` (JSON.parse + zod), so an undecodable record
 * gets the same reason as before. What the fast way lets through unchecked is the inside of the
 * two arrays: if that is not valid JSON, storage rejects it and the writer dead-letters the
 * record as unstorable.
 */
export function decodeHostSample(value: Buffer | null): DecodeResult<DecodedSample> {
  if (value !== null && isBinarySampleMessage(value)) return decodeBinaryHostSample(value);
  if (value !== null) {
    const fast = decodeCanonical(value.toString('utf8'));
    if (fast !== undefined) return { ok: true, value: fast };
  }
  const decoded = decodeSampleMessage(value);
  if (!decoded.ok) return decoded;
  const message = decoded.value;
  return {
    ok: true,
    value: {
      orgId: message.org_id,
      host: message.host,
      timeMs: message.time_ms,
      metrics: message.metrics,
      tags: message.tags,
      tagsLabelSeries: message.tags_label_series,
      staleMetrics: message.stale_metrics,
      exemplars: message.exemplars,
      histograms: message.histograms,
      containers: message.containers,
      processes: message.processes,
    },
  };
}

/**
 * How the gateway's message of a host without containers and processes ends (they are its last
 * members): the usual case of every protocol but the spec's /ingest with snapshots.
 */
const noSnapshotsTail = ',"containers":[],"processes":[]}';

function decodeCanonical(text: string): DecodedSample | undefined {
  // Without snapshots the head is the text up to that tail, closed: no scan for the two lists.
  // It is the same object as the whole text's exactly when it parses and holds neither list.
  const noSnapshots = text.endsWith(noSnapshotsTail);
  const members = noSnapshots
    ? {
        head: `${text.slice(0, text.length - noSnapshotsTail.length)}}`,
        containers: [],
        processes: [],
      }
    : splitMembers(text);
  if (members === undefined) return undefined;
  let head: unknown;
  try {
    head = JSON.parse(members.head);
  } catch {
    return undefined;
  }
  if (!isPlainObject(head)) return undefined;
  if (noSnapshots && (Object.hasOwn(head, 'containers') || Object.hasOwn(head, 'processes'))) {
    return undefined;
  }
  const { v, org_id: orgId, host, time_ms: timeMs, received_ms: receivedMs } = head;
  const { metrics, tags, tags_label_series: tagsLabelSeries, stale_metrics: staleMetrics } = head;
  const { exemplars, histograms } = head;
  if (
    v !== 1 ||
    typeof orgId !== 'string' ||
    orgId.length === 0 ||
    typeof host !== 'string' ||
    host.length === 0 ||
    host.length > maxHostNameLength ||
    !Number.isSafeInteger(timeMs) ||
    !Number.isSafeInteger(receivedMs) ||
    !isMetricValues(metrics) ||
    !isRecordOf(tags, (value) => typeof value === 'string') ||
    (tagsLabelSeries !== undefined && tagsLabelSeries !== true) ||
    (staleMetrics !== undefined &&
      !isArrayOf(staleMetrics, (value) => typeof value === 'string')) ||
    (exemplars !== undefined && !isArrayOf(exemplars, isExemplar)) ||
    (histograms !== undefined && !isHistograms(histograms))
  ) {
    return undefined;
  }
  return {
    orgId,
    host,
    timeMs: timeMs as number,
    metrics: metrics as Record<string, number>,
    tags: tags as Record<string, string>,
    tagsLabelSeries,
    staleMetrics: staleMetrics as string[] | undefined,
    exemplars: exemplars as SampleExemplar[] | undefined,
    histograms: histograms as Record<string, NativeHistogram> | undefined,
    containers: members.containers,
    processes: members.processes,
  };
}

/**
 * Whether `value` is a record of metric values as a message's JSON carries them; the special
 * values' strings are read into numbers in place (the object was just parsed, and is the
 * caller's alone).
 */
function isMetricValues(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    const entry = value[key];
    // A number past double's range (1e999) reads as ±Inf: not how a message spells one.
    if (typeof entry === 'number') {
      if (Number.isFinite(entry)) continue;
      return false;
    }
    const special = metricValueFromJson(entry);
    if (special === undefined) return false;
    // Defined, not assigned: assigning `__proto__` would set the prototype.
    Object.defineProperty(value, key, {
      value: special,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return true;
}

/** Whether `value` is an exemplar as a message's JSON carries it; its value read as a metric's. */
function isExemplar(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (key !== 'metric' && key !== 'value' && key !== 'labels') return false;
  }
  const wrapped = { value: value['value'] };
  if (typeof value['metric'] !== 'string' || !isMetricValues(wrapped)) return false;
  value['value'] = wrapped.value;
  return isRecordOf(value['labels'], (label) => typeof label === 'string');
}

/**
 * Whether `value` is a record of histograms as a message's JSON carries them (base64 of their
 * bytes); each is read into its histogram in place, as `isMetricValues` reads special values.
 */
function isHistograms(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    const entry = value[key];
    if (typeof entry !== 'string') return false;
    let histogram: NativeHistogram;
    try {
      histogram = decodeHistogram(Buffer.from(entry, 'base64'));
    } catch (err) {
      if (err instanceof HistogramChunkError) return false;
      throw err;
    }
    Object.defineProperty(value, key, {
      value: histogram,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  }
  return true;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isArrayOf(value: unknown, check: (entry: unknown) => boolean): boolean {
  return Array.isArray(value) && value.every(check);
}

function isRecordOf(value: unknown, check: (entry: unknown) => boolean): boolean {
  if (!isPlainObject(value)) return false;
  for (const key in value) {
    if (!check(value[key])) return false;
  }
  return true;
}

const quote = 0x22;
const backslash = 0x5c;
const comma = 0x2c;
const colon = 0x3a;
const openBrace = 0x7b;
const closeBrace = 0x7d;
const openBracket = 0x5b;
const closeBracket = 0x5d;

/**
 * Splits a top-level JSON object into the text of every member but `containers` and
 * `processes` (as an object again) and those two arrays' text. Undefined when the text is not
 * shaped so (a key with escapes, either array missing or repeated, unbalanced brackets…).
 * Checks structure only: JSON.parse of the head checks the rest of its syntax.
 */
function splitMembers(
  text: string,
): { head: string; containers: SnapshotJson; processes: SnapshotJson } | undefined {
  const head: string[] = [];
  let containers: SnapshotJson | undefined;
  let processes: SnapshotJson | undefined;
  let i = skipWhitespace(text, 0);
  if (text.charCodeAt(i) !== openBrace) return undefined;
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === closeBrace) return undefined;
  for (;;) {
    const keyStart = i;
    if (text.charCodeAt(keyStart) !== quote) return undefined;
    const keyEnd = skipString(text, keyStart);
    if (keyEnd < 0) return undefined;
    const key = text.slice(keyStart + 1, keyEnd - 1);
    if (key.includes('\\')) return undefined;
    i = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(i) !== colon) return undefined;
    const valueStart = skipWhitespace(text, i + 1);
    const valueEnd = skipValue(text, valueStart);
    if (valueEnd < 0) return undefined;
    if (key === 'containers' || key === 'processes') {
      const list = arrayText(text.slice(valueStart, valueEnd));
      if (list === undefined) return undefined;
      if (key === 'containers') {
        if (containers !== undefined) return undefined;
        containers = list;
      } else {
        if (processes !== undefined) return undefined;
        processes = list;
      }
    } else {
      head.push(text.slice(keyStart, valueEnd));
    }
    i = skipWhitespace(text, valueEnd);
    const next = text.charCodeAt(i);
    if (next === closeBrace) break;
    if (next !== comma) return undefined;
    i = skipWhitespace(text, i + 1);
  }
  if (skipWhitespace(text, i + 1) !== text.length) return undefined;
  if (containers === undefined || processes === undefined) return undefined;
  return { head: `{${head.join(',')}}`, containers, processes };
}

/** The array's text, `[]` for an empty one, or undefined when the value is not an array. */
function arrayText(value: string): SnapshotJson | undefined {
  if (value.charCodeAt(0) !== openBracket) return undefined;
  return value.charCodeAt(skipWhitespace(value, 1)) === closeBracket ? [] : { json: value };
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  for (;;) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
}

/** Index just past the string that starts at `start`, or -1 when it does not end. */
function skipString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const end = text.indexOf('"', from);
    if (end < 0) return -1;
    let backslashes = 0;
    while (text.charCodeAt(end - 1 - backslashes) === backslash) backslashes++;
    if (backslashes % 2 === 0) return end + 1;
    from = end + 1;
  }
}

/** Index just past the value that starts at `start`, or -1 when its strings or brackets do not close. */
function skipValue(text: string, start: number): number {
  const first = text.charCodeAt(start);
  if (first === quote) return skipString(text, start);
  let i = start;
  if (first !== openBrace && first !== openBracket) {
    // A number or a literal: it runs to the next delimiter.
    for (;;) {
      const c = text.charCodeAt(i);
      if (Number.isNaN(c) || c === comma || c === closeBrace || c === closeBracket || c <= 0x20) {
        return i > start ? i : -1;
      }
      i++;
    }
  }
  let depth = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === quote) {
      i = skipString(text, i);
      if (i < 0) return -1;
      continue;
    }
    if (c === openBrace || c === openBracket) depth++;
    else if (c === closeBrace || c === closeBracket) {
      depth--;
      if (depth === 0) return i + 1;
    }
    i++;
  }
  return -1;
}
