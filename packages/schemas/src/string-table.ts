/** Strings longer than this are never kept: decoded as usual each time. */
export const maxInternedLength = 64;

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
