import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CopyRow } from './copy-binary-reader.js';
import { createCopyBinaryReader } from './copy-binary-reader.js';

/** COPY's binary output of rows of fields (null for NULL), with a header extension of `extension` bytes. */
function copyOutput(rows: readonly CopyRow[], extension = 0): Buffer {
  const header = Buffer.alloc(8 + extension);
  header.writeInt32BE(extension, 4);
  const parts: Buffer[] = [Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), header];
  for (const row of rows) {
    const count = Buffer.alloc(2);
    count.writeInt16BE(row.length);
    parts.push(count);
    for (const field of row) {
      const length = Buffer.alloc(4);
      length.writeInt32BE(field === null ? -1 : field.length);
      parts.push(length, ...(field === null ? [] : [field]));
    }
  }
  parts.push(Buffer.from([0xff, 0xff]));
  return Buffer.concat(parts);
}

/** The rows `bytes` holds, pushed to a reader cut at `cuts` (offsets, any order). */
function readInChunks(bytes: Buffer, cuts: readonly number[]): CopyRow[] {
  const rows: CopyRow[] = [];
  const reader = createCopyBinaryReader((row) => rows.push(row));
  const ends = [...new Set([...cuts, bytes.length])].sort((a, b) => a - b);
  let start = 0;
  for (const end of ends) {
    reader.push(bytes.subarray(start, end));
    start = end;
  }
  reader.end();
  return rows;
}

const rowsArbitrary = fc.array(
  fc.array(
    fc.option(
      fc.uint8Array({ maxLength: 40 }).map((bytes) => Buffer.from(bytes)),
      {
        nil: null,
      },
    ),
    { maxLength: 4 },
  ),
  { maxLength: 12 },
);

describe('createCopyBinaryReader', () => {
  it('reads each row as its fields, NULL as null', () => {
    const id = Buffer.alloc(8);
    id.writeBigInt64BE(42n);
    const rows = [
      [id, null, Buffer.from('ab')],
      [id, Buffer.alloc(0)],
    ];
    expect(readInChunks(copyOutput(rows), [])).toEqual(rows);
  });

  it('reads the same rows however the output is cut into chunks', () => {
    fc.assert(
      fc.property(
        rowsArbitrary,
        fc.nat({ max: 6 }),
        fc.array(fc.nat({ max: 2000 }), { maxLength: 30 }),
        (rows, extension, cuts) => {
          const bytes = copyOutput(rows, extension);
          const within = cuts.map((cut) => cut % (bytes.length + 1));
          expect(readInChunks(bytes, within)).toEqual(rows);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('refuses what is no COPY binary output', () => {
    expect(() => readInChunks(Buffer.from('id\tvalue\n, and some more'), [])).toThrow(
      /COPY binary/,
    );
    expect(() => readInChunks(Buffer.from('PGCOPY'), [])).toThrow(/COPY binary/);
  });

  it('refuses output that ends inside a row, or goes on after its trailer', () => {
    fc.assert(
      fc.property(rowsArbitrary, fc.nat(), (rows, cut) => {
        const whole = copyOutput(rows);
        const short = whole.subarray(0, cut % whole.length);
        expect(() => readInChunks(short, [])).toThrow(/COPY binary/);
      }),
    );
    const whole = copyOutput([[Buffer.from('abcdef')]]);
    expect(() => readInChunks(Buffer.concat([whole, Buffer.from([0, 0])]), [])).toThrow(
      /after its trailer/,
    );
  });
});
