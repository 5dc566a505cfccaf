/**
 * PostgreSQL's binary forms of what the series source reads: one-dimensional arrays of 8-byte
 * elements (array_send, or a column of COPY's binary format) and COPY's binary rows.
 */

/** PostgreSQL's epoch (2000-01-01) in Unix ms: timestamptz's binary form counts µs from it. */
const postgresEpochMs = 946_684_800_000;

/**
 * The element count of a one-dimensional array without nulls of 8-byte elements in
 * PostgreSQL's binary format (ndim, flags, element oid, length, lower bound, then a 4-byte size
 * and the 8 bytes of each element), and a view to read them; 0 for none.
 */
function binaryArray(bytes: Uint8Array | null): { length: number; view: DataView } {
  const view =
    bytes === null
      ? new DataView(new ArrayBuffer(4))
      : new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes === null || view.getInt32(0) === 0) return { length: 0, view };
  if (view.getInt32(0) !== 1 || view.getInt32(4) !== 0 || bytes.length < 20) {
    throw new Error('expected a one-dimensional array without nulls');
  }
  const length = view.getInt32(12);
  if (bytes.length !== 20 + length * 12) throw new Error('expected 8-byte array elements');
  return { length, view };
}

/** timestamptz[] (µs since 2000-01-01) as epoch ms. Loops written out: they run per sample. */
export function decodeTimestampArray(bytes: Uint8Array | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) {
    out[i] = (view.getInt32(at) * 4_294_967_296 + view.getUint32(at + 4)) / 1000 + postgresEpochMs;
  }
  return out;
}

/**
 * int8[] of epoch milliseconds (what `raw_samples` gives for times). Exact: a time is far below
 * 2^53 ms.
 */
export function decodeEpochMsArray(bytes: Uint8Array | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) {
    out[i] = view.getInt32(at) * 4_294_967_296 + view.getUint32(at + 4);
  }
  return out;
}

/** float8[], bit for bit (−0, NaN payloads, ±Inf as sent). */
export function decodeFloat8Array(bytes: Uint8Array | null): Float64Array {
  const { length, view } = binaryArray(bytes);
  const out = new Float64Array(length);
  for (let i = 0, at = 24; i < length; i++, at += 12) out[i] = view.getFloat64(at);
  return out;
}

/** COPY's binary signature, `PGCOPY\n\377\r\n\0`. */
const signature = [0x50, 0x47, 0x43, 0x4f, 0x50, 0x59, 0x0a, 0xff, 0x0d, 0x0a, 0x00];

/**
 * The rows of `copy (…) to stdout (format binary)`, each as its fields' bytes (null for NULL),
 * views into `bytes`: the header (signature, flags, extension), then per row a 16-bit field
 * count and each field's 32-bit length (−1 for NULL) and bytes, then a field count of −1.
 */
export function copyBinaryRows(bytes: Buffer): (Buffer | null)[][] {
  if (bytes.length < 19 || signature.some((byte, i) => bytes[i] !== byte)) {
    throw new Error('expected COPY binary output');
  }
  let at = 19 + bytes.readInt32BE(15);
  const rows: (Buffer | null)[][] = [];
  for (;;) {
    const fields = bytes.readInt16BE(at);
    at += 2;
    if (fields === -1) break;
    const row: (Buffer | null)[] = [];
    for (let f = 0; f < fields; f++) {
      const length = bytes.readInt32BE(at);
      at += 4;
      if (length === -1) {
        row.push(null);
        continue;
      }
      if (at + length > bytes.length) throw new Error('COPY binary output ends inside a field');
      row.push(bytes.subarray(at, (at += length)));
    }
    rows.push(row);
  }
  if (at !== bytes.length) throw new Error('COPY binary output goes on after its trailer');
  return rows;
}
