/**
 * The rows of `copy (…) to stdout (format binary)` read as the output streams in: the header
 * (signature, flags, extension), then per row a 16-bit field count and each field's 32-bit length
 * (−1 for NULL) and bytes, then a field count of −1.
 */

/** COPY's binary signature, `PGCOPY\n\377\r\n\0`. */
const signature = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];

/** One row's fields: views into the bytes pushed (null for NULL). */
export type CopyRow = readonly (Buffer | null)[];

export type CopyBinaryReader = {
  /** Reads the next bytes of the output; hands every row they complete to `onRow`. */
  push(chunk: Buffer): void;
  /** Checks that the output ended with its trailer, and nothing after it. */
  end(): void;
};

/**
 * A reader of COPY's binary output in chunks as they come: each row is handed over as soon as its
 * last byte is in, as views into the chunks, so that a read of many series never holds (nor
 * copies) the whole output at once, tens of MB for a PromQL selection (docs/benchmarks/promql.md,
 * "PromQL"). A row split across chunks is joined once all of it is in: the only copy.
 */
export function createCopyBinaryReader(onRow: (row: CopyRow) => void): CopyBinaryReader {
  let headerRead = false;
  let ended = false;
  // Bytes of an incomplete row (or header), and how many bytes the next attempt needs at least.
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let neededBytes = 0;

  /** Reads what `bytes` holds from its start; returns where the unread rest begins. */
  function read(bytes: Buffer): number {
    let at = 0;
    if (!headerRead) {
      if (bytes.length < 19) return need(0, 19);
      if (signature.some((byte, i) => bytes[i] !== byte)) {
        throw new Error('expected COPY binary output');
      }
      const header = 19 + bytes.readInt32BE(15);
      if (bytes.length < header) return need(0, header);
      headerRead = true;
      at = header;
    }
    while (at < bytes.length) {
      if (ended) throw new Error('COPY binary output goes on after its trailer');
      const rowStart = at;
      if (at + 2 > bytes.length) return need(rowStart, 2);
      const fields = bytes.readInt16BE(at);
      at += 2;
      if (fields === -1) {
        ended = true;
        continue;
      }
      const row: (Buffer | null)[] = [];
      for (let f = 0; f < fields; f++) {
        if (at + 4 > bytes.length) return need(rowStart, at + 4 - rowStart);
        const length = bytes.readInt32BE(at);
        at += 4;
        if (length === -1) {
          row.push(null);
          continue;
        }
        if (at + length > bytes.length) return need(rowStart, at + length - rowStart);
        row.push(bytes.subarray(at, (at += length)));
      }
      onRow(row);
    }
    neededBytes = 0;
    return at;
  }

  /** Leaves the bytes from `start` for later: at least `bytes` of them are needed to go on. */
  function need(start: number, bytes: number): number {
    neededBytes = bytes;
    return start;
  }

  return {
    push(chunk) {
      pending.push(chunk);
      pendingBytes += chunk.length;
      if (pendingBytes < neededBytes) return;
      const bytes = pending.length === 1 ? chunk : Buffer.concat(pending, pendingBytes);
      const rest = bytes.subarray(read(bytes));
      pending = rest.length === 0 ? [] : [rest];
      pendingBytes = rest.length;
    },
    end() {
      if (!headerRead) throw new Error('expected COPY binary output');
      if (!ended || pendingBytes > 0) throw new Error('COPY binary output ends inside a row');
    },
  };
}
