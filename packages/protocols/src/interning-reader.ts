import protobuf from 'protobufjs';

/** Strings longer than this are decoded as protobufjs decodes them, never kept. */
const maxInternedLength = 64;

/**
 * Recently decoded short ASCII strings, in a direct-mapped table (a new string replaces the one
 * in its slot), so its memory is bounded: at most `slots` strings of at most 64 characters.
 */
export class StringTable {
  readonly #slots: (string | undefined)[];
  readonly #mask: number;

  /** `slots` must be a power of two. */
  constructor(slots: number) {
    if (!Number.isInteger(Math.log2(slots))) throw new RangeError('slots must be a power of two');
    this.#slots = new Array<string | undefined>(slots).fill(undefined);
    this.#mask = slots - 1;
  }

  /**
   * The kept string of `bytes[start, end)`, or else the slot in which to `keep` it once decoded.
   * A kept string is ASCII, so equal char codes mean equal bytes, and those bytes are valid UTF-8.
   */
  find(bytes: Uint8Array, start: number, end: number): string | number {
    const length = end - start;
    // FNV-1a over the bytes.
    let hash = 0x811c9dc5 ^ length;
    for (let i = start; i < end; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
    const slot = (hash >>> 0) & this.#mask;
    const kept = this.#slots[slot];
    if (kept !== undefined && kept.length === length && sameAscii(kept, bytes, start)) return kept;
    return slot;
  }

  /** Keeps `decoded`, the string of `bytes[start, end)`, in `slot` if it is ASCII. */
  keep(slot: number, decoded: string, bytes: Uint8Array, start: number, end: number): void {
    if (decoded.length === end - start && isAscii(bytes, start, end)) this.#slots[slot] = decoded;
  }
}

function sameAscii(kept: string, bytes: Uint8Array, start: number): boolean {
  for (let i = 0; i < kept.length; i++) {
    if (kept.charCodeAt(i) !== bytes[start + i]) return false;
  }
  return true;
}

function isAscii(bytes: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) if (bytes[i]! >= 0x80) return false;
  return true;
}

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
