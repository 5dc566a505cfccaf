import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { binarySampleChunks } from './copy-binary.js';
import { unscaled } from '../storage/scaled-value.js';

const signature = '5047434f50590aff0d0a00' + '00000000' + '00000000';
const trailer = 'ffff';
const nullField = 'ffffffff';

/** One row of a float8 value as COPY's binary format spells it: 5 fields, two of them NULL. */
function row(timeMicros: string, id: string, value: string): string {
  return (
    `0005` + `00000008${timeMicros}` + `00000008${id}` + nullField + nullField + `00000008${value}`
  );
}

/** Sample columns of float8 values only (every scale `unscaled`). */
function floats(timesMs: number[], seriesIds: number[], values: number[]) {
  return {
    timesMs,
    seriesIds,
    values,
    mantissas: values.map(() => 0),
    scales: values.map(() => unscaled),
  };
}

describe('binarySampleChunks', () => {
  it('writes microseconds since 2000, the id and the double, big-endian', () => {
    const chunks = [
      ...binarySampleChunks(floats([Date.UTC(2000, 0, 1) + 1], [258], [1.5]), 10, 'timestamptz'),
    ];
    expect(chunks.map((chunk) => chunk.toString('hex'))).toEqual([
      signature + row('00000000000003e8', '0000000000000102', '3ff8000000000000') + trailer,
    ]);
  });

  it('writes epoch milliseconds as an int64 for a bigint time column', () => {
    const timeMs = Date.UTC(2026, 10, 25, 12, 0, 0, 15);
    const chunks = [...binarySampleChunks(floats([timeMs], [258], [1.5]), 10, 'epochMs')];
    expect(chunks.map((chunk) => chunk.toString('hex'))).toEqual([
      signature +
        row(timeMs.toString(16).padStart(16, '0'), '0000000000000102', '3ff8000000000000') +
        trailer,
    ]);
  });

  it('writes a scaled value as its mantissa and scale, the double NULL', () => {
    const samples = {
      timesMs: [Date.UTC(2000, 0, 1)],
      seriesIds: [1],
      values: [-12.5],
      mantissas: [-125],
      scales: [1],
    };
    const [chunk] = [...binarySampleChunks(samples, 10, 'timestamptz')];
    expect(chunk?.toString('hex')).toBe(
      signature +
        '0005' +
        '00000008' +
        '0000000000000000' +
        '00000008' +
        '0000000000000001' +
        '00000008' +
        'ffffffffffffff83' +
        '00000002' +
        '0001' +
        nullField +
        trailer,
    );
  });

  it('writes times before 2000 and ids beyond 32 bits as two’s complement int64', () => {
    const [chunk] = [
      ...binarySampleChunks(
        floats([Date.UTC(1999, 11, 31, 23, 59, 59, 999)], [2 ** 40 + 5], [-0]),
        10,
        'timestamptz',
      ),
    ];
    expect(chunk?.toString('hex')).toBe(
      signature + row('fffffffffffffc18', '0000010000000005', '8000000000000000') + trailer,
    );
  });

  it('is exact for every time a Date holds, though its microseconds pass 2^53', () => {
    for (const timeMs of [8.64e15, -8.64e15, Date.UTC(2262, 3, 11, 23, 47, 16, 855), 1, -1]) {
      const [chunk] = [...binarySampleChunks(floats([timeMs], [1], [0]), 10, 'timestamptz')];
      const micros = chunk!.readBigInt64BE(signature.length / 2 + 2 + 4);
      expect(micros).toBe(BigInt(timeMs - Date.UTC(2000, 0, 1)) * 1000n);
    }
  });

  it('writes any storable row exactly, in either time column', () => {
    const maxDateMs = 8.64e15;
    const storedRow = fc.record({
      timeMs: fc.integer({ min: -maxDateMs, max: maxDateMs }),
      seriesId: fc.maxSafeInteger().filter((id) => id > 0),
      value: fc.double(),
      mantissa: fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
      scale: fc.integer({ min: -32768, max: 32767 }),
    });
    fc.assert(
      fc.property(
        fc.array(storedRow, { minLength: 1, maxLength: 40 }),
        fc.constantFrom('epochMs' as const, 'timestamptz' as const),
        (rows, timeColumn) => {
          const samples = {
            timesMs: rows.map((r) => r.timeMs),
            seriesIds: rows.map((r) => r.seriesId),
            values: rows.map((r) => r.value),
            mantissas: rows.map((r) => r.mantissa),
            scales: rows.map((r) => r.scale),
          };
          const bytes = Buffer.concat([...binarySampleChunks(samples, 7, timeColumn)]);
          let at = signature.length / 2;
          for (const r of rows) {
            expect(bytes.readInt16BE(at)).toBe(5);
            expect(bytes.readInt32BE(at + 2)).toBe(8);
            expect(bytes.readBigInt64BE(at + 6)).toBe(
              timeColumn === 'epochMs'
                ? BigInt(r.timeMs)
                : BigInt(r.timeMs - Date.UTC(2000, 0, 1)) * 1000n,
            );
            expect(bytes.readInt32BE(at + 14)).toBe(8);
            expect(bytes.readBigInt64BE(at + 18)).toBe(BigInt(r.seriesId));
            at += 26;
            if (r.scale === unscaled) {
              expect([bytes.readInt32BE(at), bytes.readInt32BE(at + 4)]).toEqual([-1, -1]);
              expect(bytes.readInt32BE(at + 8)).toBe(8);
              expect(Object.is(bytes.readDoubleBE(at + 12), r.value)).toBe(true);
              at += 20;
            } else {
              expect(bytes.readInt32BE(at)).toBe(8);
              expect(bytes.readBigInt64BE(at + 4)).toBe(BigInt(r.mantissa));
              expect(bytes.readInt32BE(at + 12)).toBe(2);
              expect(bytes.readInt16BE(at + 16)).toBe(r.scale);
              expect(bytes.readInt32BE(at + 18)).toBe(-1);
              at += 22;
            }
          }
          expect(bytes.subarray(at).toString('hex')).toBe(trailer);
        },
      ),
    );
  });

  it('splits rows into chunks, the header in the first and the trailer in the last', () => {
    const times = [0, 1, 2, 3, 4].map((i) => Date.UTC(2026, 0, 1) + i);
    const chunks = [
      ...binarySampleChunks(floats(times, [1, 2, 3, 4, 5], [1, 2, 3, 4, 5]), 2, 'epochMs'),
    ];
    const rowBytes = 2 + 3 * 12 + 2 * 4;
    expect(chunks.map((chunk) => chunk.length)).toEqual([
      signature.length / 2 + 2 * rowBytes,
      2 * rowBytes,
      rowBytes + trailer.length / 2,
    ]);
    expect(chunks[0]!.subarray(0, signature.length / 2).toString('hex')).toBe(signature);
    expect(chunks[2]!.subarray(-2).toString('hex')).toBe(trailer);
  });

  it('writes the rows in the order given, across chunks', () => {
    const epoch = Date.UTC(2000, 0, 1);
    const hex = (n: number): string => n.toString(16).padStart(16, '0');
    const chunks = [
      ...binarySampleChunks(
        floats([epoch, epoch, epoch], [1, 2, 3], [0, 0, 0]),
        2,
        'timestamptz',
        [2, 0, 1],
      ),
    ];
    expect(chunks.map((chunk) => chunk.toString('hex')).join('')).toBe(
      signature + [3, 1, 2].map((id) => row(hex(0), hex(id), hex(0))).join('') + trailer,
    );
  });

  it('writes only the rows of the order given, which leaves out duplicates', () => {
    const epoch = Date.UTC(2000, 0, 1);
    const hex = (n: number): string => n.toString(16).padStart(16, '0');
    const chunks = [
      ...binarySampleChunks(
        floats([epoch, epoch, epoch], [1, 2, 3], [0, 0, 0]),
        2,
        'timestamptz',
        [2],
      ),
    ];
    expect(chunks.map((chunk) => chunk.toString('hex')).join('')).toBe(
      signature + row(hex(0), hex(3), hex(0)) + trailer,
    );
  });

  it('writes a header and trailer alone for no rows', () => {
    expect(
      [...binarySampleChunks(floats([], [], []), 10, 'epochMs')].map((chunk) =>
        chunk.toString('hex'),
      ),
    ).toEqual([signature + trailer]);
  });
});
