import type { DecodedSample, SampleExemplar } from './decoded-sample.js';
import { decodeHistogram, encodeHistogram, HistogramChunkError } from './histogram-chunk.js';
import type { NativeHistogram } from './native-histogram.js';
import type { DecodeResult, SampleMessage } from './sample-message.js';
import { encodeSampleMessage } from './sample-message.js';
import { maxInternedLength, StringTable } from './string-table.js';
import { maxHostNameLength } from './host-name.js';

/**
 * A host sample message in binary: what `encodeSampleMessage`'s JSON carries, without the text
 * the writer and the evaluator would parse again for every host (JSON.parse and the strings it
 * builds were a quarter of the writer's CPU in a drain). Little-endian:
 *
 * | bytes | field                                                                   |
 * | ----- | ----------------------------------------------------------------------- |
 * | 1     | `01`: binary (JSON text never starts so, a framed record starts `00`)   |
 * | 1     | version, `01`                                                           |
 * | 1     | flags: bit 0 `tags_label_series`, bit 1 `stale_metrics` present        |
 * | 8 + 8 | `time_ms`, `received_ms` (float64, integers)                           |
 * | s + s | `org_id`, `host`                                                        |
 * | 2 + … | metric count, then per metric its name (s) and value (float64)          |
 * | 2 + … | tag count, then per tag its key and value (s s)                         |
 * | 2 + … | when flagged: stale metric count, then each name (s)                    |
 * | 2 + … | when flagged: exemplar count, then per exemplar its metric (s), value   |
 * |       | (float64), label count and labels (s s)                                |
 * | 2 + … | when flagged: histogram count, then per histogram its metric (s) and    |
 * |       | its bytes (4-byte length, then histogram-chunk.ts' layout of one)       |
 * | 4 + … | `containers` as JSON (0 bytes: an empty list), then `processes` alike  |
 *
 * A string (s) is a 2-byte byte length and its UTF-8. A message that does not fit (a string of
 * 64 KiB, 65,536 metrics) is encoded as JSON instead: readers take either.
 */
const binaryMarker = 0x01;
const binaryVersion = 1;
const flagTagsLabelSeries = 0b01;
const flagStaleMetrics = 0b10;
const flagExemplars = 0b100;
const flagHistograms = 0b1000;
const knownFlags = flagTagsLabelSeries | flagStaleMetrics | flagExemplars | flagHistograms;
const maxShort = 0xffff;

/** Whether a host sample message is binary (else it is JSON text). */
export function isBinarySampleMessage(value: Buffer): boolean {
  return value[0] === binaryMarker;
}

/** Thrown inside the encoder when the message does not fit the binary layout. */
class DoesNotFit extends Error {}

/**
 * The encoder's scratch space, shared by every call (encoding is synchronous, so none overlap);
 * each message is copied out of it at its exact size. Grows, never shrinks.
 */
let scratch = Buffer.allocUnsafe(64 * 1024);
let at = 0;

function reserve(bytes: number): void {
  if (at + bytes <= scratch.length) return;
  const grown = Buffer.allocUnsafe(Math.max(scratch.length * 2, at + bytes));
  scratch.copy(grown, 0, 0, at);
  scratch = grown;
}

function writeShort(value: number): void {
  if (value > maxShort) throw new DoesNotFit();
  scratch[at] = value & 0xff;
  scratch[at + 1] = value >>> 8;
  at += 2;
}

function writeString(text: string): void {
  reserve(2 + text.length * 3);
  const lengthAt = at;
  at += 2;
  // ASCII (nearly every name and value) byte by byte: no native call per string.
  let i = 0;
  for (; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) break;
    scratch[at + i] = code;
  }
  const bytes = i === text.length ? i : scratch.write(text, at, 'utf8');
  if (bytes > maxShort) throw new DoesNotFit();
  scratch[lengthAt] = bytes & 0xff;
  scratch[lengthAt + 1] = bytes >>> 8;
  at += bytes;
}

function writeDouble(value: number): void {
  reserve(8);
  at = scratch.writeDoubleLE(value, at);
}

function writeJsonList(list: readonly unknown[]): void {
  const json = list.length === 0 ? '' : JSON.stringify(list);
  reserve(4 + json.length * 3);
  const bytes = json === '' ? 0 : scratch.write(json, at + 4, 'utf8');
  scratch.writeUInt32LE(bytes, at);
  at += 4 + bytes;
}

function keysOf(record: Readonly<Record<string, unknown>>): string[] {
  const keys = Object.keys(record);
  if (keys.length > maxShort) throw new DoesNotFit();
  return keys;
}

/** The message in binary (see above), or as JSON when it does not fit the binary layout. */
export function encodeBinarySampleMessage(message: SampleMessage): Buffer {
  at = 0;
  try {
    reserve(3);
    scratch[0] = binaryMarker;
    scratch[1] = binaryVersion;
    scratch[2] =
      (message.tags_label_series === true ? flagTagsLabelSeries : 0) |
      (message.stale_metrics === undefined ? 0 : flagStaleMetrics) |
      (message.exemplars === undefined ? 0 : flagExemplars) |
      (message.histograms === undefined ? 0 : flagHistograms);
    at = 3;
    writeDouble(message.time_ms);
    writeDouble(message.received_ms);
    writeString(message.org_id);
    writeString(message.host);
    const { metrics, tags } = message;
    const metricNames = keysOf(metrics);
    reserve(2);
    writeShort(metricNames.length);
    for (const name of metricNames) {
      writeString(name);
      // Any value, bit for bit (NaN, ±Inf and −0 included; JSON spells those out).
      writeDouble(metrics[name] as number);
    }
    const tagKeys = keysOf(tags);
    reserve(2);
    writeShort(tagKeys.length);
    for (const key of tagKeys) {
      writeString(key);
      writeString(tags[key] as string);
    }
    if (message.stale_metrics !== undefined) {
      reserve(2);
      writeShort(message.stale_metrics.length);
      for (const name of message.stale_metrics) writeString(name);
    }
    if (message.exemplars !== undefined) {
      reserve(2);
      writeShort(message.exemplars.length);
      for (const exemplar of message.exemplars) {
        writeString(exemplar.metric);
        writeDouble(exemplar.value);
        const labelNames = keysOf(exemplar.labels);
        reserve(2);
        writeShort(labelNames.length);
        for (const name of labelNames) {
          writeString(name);
          writeString(exemplar.labels[name] as string);
        }
      }
    }
    if (message.histograms !== undefined) {
      const { histograms } = message;
      const metrics = keysOf(histograms);
      reserve(2);
      writeShort(metrics.length);
      for (const metric of metrics) {
        writeString(metric);
        const bytes = encodeHistogram(histograms[metric] as NativeHistogram);
        reserve(4 + bytes.length);
        scratch.writeUInt32LE(bytes.length, at);
        scratch.set(bytes, at + 4);
        at += 4 + bytes.length;
      }
    }
    writeJsonList(message.containers);
    writeJsonList(message.processes);
  } catch (err) {
    if (err instanceof DoesNotFit) return encodeSampleMessage(message);
    throw err;
  }
  const encoded = Buffer.allocUnsafe(at);
  scratch.copy(encoded, 0, 0, at);
  return encoded;
}

/** Why a binary message does not decode, thrown inside the decoder. */
class Undecodable extends Error {}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
/**
 * Names and tag values repeat from host to host and sample to sample: each is kept once, and a
 * later lookup by it finds its hash already computed. 16,384 strings of at most 64 characters.
 */
const decodedStrings = new StringTable(16_384);

/** A cursor over one message. */
class BinaryReader {
  pos = 3;
  constructor(readonly bytes: Buffer) {}

  need(bytes: number): void {
    if (this.pos + bytes > this.bytes.length) throw new Undecodable('is cut short');
  }

  short(): number {
    this.need(2);
    const value = this.bytes[this.pos]! | (this.bytes[this.pos + 1]! << 8);
    this.pos += 2;
    return value;
  }

  double(): number {
    this.need(8);
    const value = this.bytes.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  string(): string {
    const length = this.short();
    this.need(length);
    const start = this.pos;
    const end = start + length;
    this.pos = end;
    const { bytes } = this;
    if (length > maxInternedLength) return decodeUtf8(bytes, start, end);
    const found = decodedStrings.find(bytes, start, end);
    if (typeof found === 'string') return found;
    const decoded = decodeUtf8(bytes, start, end);
    decodedStrings.keep(found, decoded, bytes, start, end);
    return decoded;
  }

  histogram(): NativeHistogram {
    this.need(4);
    const length = this.bytes.readUInt32LE(this.pos);
    this.pos += 4;
    this.need(length);
    const bytes = this.bytes.subarray(this.pos, this.pos + length);
    this.pos += length;
    try {
      return decodeHistogram(bytes);
    } catch (err) {
      if (err instanceof HistogramChunkError) throw new Undecodable(`holds ${err.message}`);
      throw err;
    }
  }

  jsonList(): DecodedSample['containers'] {
    this.need(4);
    const length = this.bytes.readUInt32LE(this.pos);
    this.pos += 4;
    if (length === 0) return [];
    this.need(length);
    const json = this.bytes.toString('utf8', this.pos, this.pos + length);
    this.pos += length;
    return { json };
  }
}

function decodeUtf8(bytes: Buffer, start: number, end: number): string {
  try {
    return utf8.decode(bytes.subarray(start, end));
  } catch {
    throw new Undecodable('holds a string that is not UTF-8');
  }
}

/**
 * Sets `record[key]` as JSON.parse would: as an own property even for `__proto__` (an
 * assignment would set the prototype instead).
 */
function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  if (key === '__proto__') {
    Object.defineProperty(record, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else record[key] = value;
}

/**
 * Decodes a binary host sample message (`isBinarySampleMessage`), checked as the JSON message
 * is against `sampleMessageSchema`; the snapshot lists are passed on as JSON text, unread.
 */
export function decodeBinaryHostSample(value: Buffer): DecodeResult<DecodedSample> {
  try {
    return { ok: true, value: readBinary(value) };
  } catch (err) {
    if (!(err instanceof Undecodable)) throw err;
    return { ok: false, reason: `binary sample message ${err.message}` };
  }
}

function readBinary(value: Buffer): DecodedSample {
  if (value.length < 3) throw new Undecodable('is cut short');
  if (value[1] !== binaryVersion) throw new Undecodable(`has unknown version ${value[1]}`);
  const flags = value[2]!;
  if ((flags & ~knownFlags) !== 0) throw new Undecodable(`has unknown flags ${flags}`);
  const reader = new BinaryReader(value);
  const timeMs = reader.double();
  const receivedMs = reader.double();
  if (!Number.isSafeInteger(timeMs) || !Number.isSafeInteger(receivedMs)) {
    throw new Undecodable('has a time that is not an integer');
  }
  const orgId = reader.string();
  const host = reader.string();
  if (orgId.length === 0) throw new Undecodable('has an empty org_id');
  if (host.length === 0 || host.length > maxHostNameLength) {
    throw new Undecodable(`has a host of ${host.length} characters (1 to ${maxHostNameLength})`);
  }
  const metrics: Record<string, number> = {};
  for (let count = reader.short(); count > 0; count--) {
    const name = reader.string();
    setOwn(metrics, name, reader.double());
  }
  const tags: Record<string, string> = {};
  for (let count = reader.short(); count > 0; count--) {
    const key = reader.string();
    setOwn(tags, key, reader.string());
  }
  let staleMetrics: string[] | undefined;
  if ((flags & flagStaleMetrics) !== 0) {
    staleMetrics = [];
    for (let count = reader.short(); count > 0; count--) staleMetrics.push(reader.string());
  }
  let exemplars: SampleExemplar[] | undefined;
  if ((flags & flagExemplars) !== 0) {
    exemplars = [];
    for (let count = reader.short(); count > 0; count--) {
      const metric = reader.string();
      const exemplarValue = reader.double();
      const labels: Record<string, string> = {};
      for (let labelCount = reader.short(); labelCount > 0; labelCount--) {
        const name = reader.string();
        setOwn(labels, name, reader.string());
      }
      exemplars.push({ metric, value: exemplarValue, labels });
    }
  }
  let histograms: Record<string, NativeHistogram> | undefined;
  if ((flags & flagHistograms) !== 0) {
    histograms = {};
    for (let count = reader.short(); count > 0; count--) {
      const metric = reader.string();
      setOwn(histograms, metric, reader.histogram());
    }
  }
  const containers = reader.jsonList();
  const processes = reader.jsonList();
  if (reader.pos !== value.length) {
    throw new Undecodable(`has ${value.length - reader.pos} bytes past its end`);
  }
  return {
    orgId,
    host,
    timeMs,
    metrics,
    tags,
    tagsLabelSeries: (flags & flagTagsLabelSeries) !== 0 ? true : undefined,
    staleMetrics,
    exemplars,
    histograms,
    containers,
    processes,
  };
}
