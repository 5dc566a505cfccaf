import protobuf from 'protobufjs';
import type { StringTable } from '@monitor/schemas';
import { maxInternedLength } from '@monitor/schemas';

/**
 * protobufjs' reader, whose UTF-8-checked strings (every `string` field of a proto3 file) come
 * through a `StringTable`. An agent sends the same label names and values in every request, and
 * protobufjs builds each one anew, character by character, as a string that must be flattened
 * again before it can be hashed. Returning the kept string instead saves the building, the
 * flattening and the garbage, and each later map lookup of it finds its hash already computed.
 * Strings it has not kept, and all other fields, are read by protobufjs itself.
 */
export class InterningReader extends protobuf.Reader {
  readonly #table: StringTable;

  constructor(bytes: Uint8Array, table: StringTable) {
    super(bytes);
    this.#table = table;
  }

  override stringVerify(): string {
    const start = this.pos;
    const length = this.size();
    const bodyStart = this.pos;
    const end = bodyStart + length;
    // protobufjs' own read checks the length against the buffer, and the UTF-8.
    if (end > this.len || length > maxInternedLength) {
      this.pos = start;
      return super.stringVerify();
    }
    const found = this.#table.find(this.buf, bodyStart, end);
    if (typeof found === 'string') {
      this.pos = end;
      return found;
    }
    this.pos = start;
    const decoded = super.stringVerify();
    this.#table.keep(found, decoded, this.buf, bodyStart, end);
    return decoded;
  }

  /**
   * A zigzag varint (sint64: a native histogram's bucket deltas) as a number, the value
   * int64ToNumber makes of protobufjs' Long (exact below 2^53), without the Long: two dozen of
   * them per histogram were most of its decode's garbage. Typed as protobufjs types it; every
   * reader of these fields takes a number as well (Int64).
   */
  override sint64(): protobuf.Long {
    const { buf, len } = this;
    let pos = this.pos;
    let lo = 0;
    let hi = 0;
    for (let shift = 0; ; shift += 7) {
      if (shift > 63) throw new Error('invalid varint encoding');
      if (pos >= len) throw new RangeError(`index out of range: ${pos} + 1 > ${len}`);
      const byte = buf[pos++]!;
      if (shift < 28) lo |= (byte & 127) << shift;
      else if (shift === 28) {
        lo |= (byte & 15) << 28;
        hi |= (byte & 127) >>> 4;
      } else hi |= (byte & 127) << (shift - 32);
      if (byte < 128) break;
    }
    this.pos = pos;
    lo >>>= 0;
    hi >>>= 0;
    // Zigzag, on the two halves as protobufjs' LongBits.zzDecode.
    const mask = -(lo & 1);
    const low = ((lo >>> 1) | (hi << 31)) ^ mask;
    const high = (hi >>> 1) ^ mask;
    return ((high | 0) * 4294967296 + (low >>> 0)) as unknown as protobuf.Long;
  }
}
