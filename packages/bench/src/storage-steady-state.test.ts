import { describe, expect, it } from 'vitest';
import { steadyState, uncompressedHours } from './storage-steady-state.js';

describe('uncompressedHours', () => {
  it('is half a chunk, the compress-after delay and half a job interval', () => {
    expect(uncompressedHours({ chunkHours: 6, compressAfterHours: 1, jobIntervalHours: 1 })).toBe(
      4.5,
    );
  });
});

describe('steadyState', () => {
  const base = {
    retentionHours: 720,
    dictionaryBytes: 3_000,
    samples: 1_000,
    historyHours: 24,
  };

  it('weights each relation by the share of the retention left uncompressed', () => {
    const state = steadyState({
      ...base,
      parts: [
        {
          name: 'samples',
          compressed: { bytes: 3_000, samples: 1_000 },
          uncompressed: { bytes: 100_000, samples: 1_000 },
        },
      ],
      uncompressedHoursOf: { samples: 72 },
    });
    expect(state.terms[0]!.uncompressedShare).toBe(0.1);
    expect(state.terms[0]!.perSample).toBeCloseTo(3 * 0.9 + 100 * 0.1, 12);
    // 30 days hold 30 × the day's samples.
    expect(state.dictionaryPerSample).toBe(0.1);
    expect(state.total).toBeCloseTo(12.7 + 0.1, 12);
  });

  it('takes a relation measured in one state for both, and caps the share at the whole', () => {
    const state = steadyState({
      ...base,
      parts: [
        {
          name: 'samples_1h',
          compressed: { bytes: 0, samples: 0 },
          uncompressed: { bytes: 500, samples: 1_000 },
        },
      ],
      uncompressedHoursOf: { samples_1h: 1_000 },
    });
    expect(state.terms[0]).toMatchObject({ uncompressedShare: 1, perSample: 0.5 });
  });

  it('counts a relation that holds rows for part of the retention over that part only', () => {
    const state = steadyState({
      ...base,
      parts: [
        {
          name: 'samples_1m',
          compressed: { bytes: 12_000, samples: 1_000 },
          uncompressed: { bytes: 72_000, samples: 1_000 },
        },
      ],
      uncompressedHoursOf: { samples_1m: 14.5 },
      heldHoursOf: { samples_1m: 12 },
    });
    expect(state.terms[0]!.compressedShare).toBe(0);
    expect(state.terms[0]!.uncompressedShare).toBeCloseTo(12 / 720, 12);
    expect(state.terms[0]!.perSample).toBeCloseTo((72 * 12) / 720, 12);
  });

  it('refuses a relation with nothing measured or no window', () => {
    const empty = { bytes: 0, samples: 0 };
    expect(() =>
      steadyState({
        ...base,
        parts: [{ name: 'x', compressed: empty, uncompressed: empty }],
        uncompressedHoursOf: { x: 1 },
      }),
    ).toThrow(RangeError);
    expect(() =>
      steadyState({
        ...base,
        parts: [{ name: 'x', compressed: { bytes: 1, samples: 1 }, uncompressed: empty }],
        uncompressedHoursOf: {},
      }),
    ).toThrow(RangeError);
  });
});
