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
}
