import type { DecodeResult } from './sample-message.js';

/**
 * A record of the samples topic, in one of its two formats:
 *
 * - **format 1**: one host sample message, JSON text (`encodeSampleMessage`, `v: 1`) or binary
 *   (`encodeBinarySampleMessage`, first byte `01`);
 * - **format 2**: several host sample messages of the same partition, each exactly as format 1
 *   would carry it, framed: the bytes `00 02`, then per message a 4-byte big-endian length and
 *   the message. Neither message starts with a NUL byte, so the first byte tells them apart.
 *
 * Framing rather than one JSON array keeps every host's message separable without parsing:
 * each is decoded on its own (the fast decoder skips its snapshot lists), and a host whose
 * message is bad is dead-lettered on its own, as a format-1 record, without its neighbours.
 */
/**
 * The header a dead letter of one host of a framed record carries: its place in the record
 * (the dead letter's value is that host's message alone, a format-1 record).
 */
export const sampleRecordIndexHeader = 'x-sample-record-index';

const framedMarker = 0x00;
const framedFormat = 0x02;
const headerBytes = 2;
const lengthBytes = 4;

/**
 * One record value for `messages` (encoded host sample messages that share a partition, in
 * publish order): a single message is its own format-1 record, several are framed.
 */
export function encodeSampleRecord(messages: readonly Buffer[]): Buffer {
  const [only] = messages;
  if (messages.length === 1 && only !== undefined) return only;
  if (messages.length === 0) throw new RangeError('a sample record needs at least one message');
  let total = headerBytes;
  for (const message of messages) total += lengthBytes + message.length;
  const record = Buffer.allocUnsafe(total);
  record[0] = framedMarker;
  record[1] = framedFormat;
  let offset = headerBytes;
  for (const message of messages) {
    record.writeUInt32BE(message.length, offset);
    offset += lengthBytes;
    offset += message.copy(record, offset);
  }
  return record;
}

/** Bytes of a framed record of `messageBytes` in total over `messages` messages. */
export function sampleRecordBytes(messages: number, messageBytes: number): number {
  return messages === 1 ? messageBytes : headerBytes + messages * lengthBytes + messageBytes;
}

/**
 * The host sample messages a record carries, in order (views into `value`, not copies), or why
 * the record is not one (a broken frame: the whole record is dead-letter material). A format-1
 * record is its own single message, whether or not it decodes.
 */
export function sampleRecordMessages(value: Buffer | null): DecodeResult<Buffer[]> {
  if (value === null) return { ok: false, reason: 'empty message value' };
  if (value.length === 0 || value[0] !== framedMarker) return { ok: true, value: [value] };
  if (value.length < headerBytes || value[1] !== framedFormat) {
    return { ok: false, reason: `unknown sample record format ${value[1] ?? 'missing'}` };
  }
  const messages: Buffer[] = [];
  let offset = headerBytes;
  while (offset < value.length) {
    if (offset + lengthBytes > value.length) {
      return { ok: false, reason: `sample record frame ${messages.length} is cut short` };
    }
    const length = value.readUInt32BE(offset);
    offset += lengthBytes;
    if (length === 0 || offset + length > value.length) {
      return { ok: false, reason: `sample record frame ${messages.length} is cut short` };
    }
    messages.push(value.subarray(offset, offset + length));
    offset += length;
  }
  if (messages.length === 0) return { ok: false, reason: 'sample record carries no message' };
  return { ok: true, value: messages };
}
