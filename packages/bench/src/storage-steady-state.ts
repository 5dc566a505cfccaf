import type { Database } from '@monitor/db';
import { countSamplesBetween, listChunkParts } from '@monitor/db/bench';

/**
 * Bytes per raw sample at steady state (issue 39): a deployment past its first raw retention,
 * counted per sample it holds raw. A bench history is shorter than the retention, so the steady
 * state is computed from measured parts: for each hypertable (the raw samples, each aggregate's
 * materialization), bytes per raw sample of its compressed chunks and of its uncompressed ones,
 * weighted by the share of the retention that the shipped policies leave uncompressed; plus
 * the series dictionary and the services projection, spread over the samples a series holds
 * over the retention.
 */

/** Bytes of some chunks of a hypertable, and the raw samples of their time ranges. */
type ChunkPart = { bytes: number; samples: number };

export type MeasuredParts = {
  /** The raw samples' hypertable or an aggregate's view name. */
  name: string;
  compressed: ChunkPart;
  uncompressed: ChunkPart;
};

/**
 * How long a chunk stays uncompressed, on average over time: it fills for its whole interval
 * (half of it on average), is taken `compressAfterHours` after its end, by a job that runs every
 * `jobIntervalHours` (half of that on average).
 */
export function uncompressedHours(window: {
  chunkHours: number;
  compressAfterHours: number;
  jobIntervalHours: number;
}): number {
  return window.chunkHours / 2 + window.compressAfterHours + window.jobIntervalHours / 2;
}

type SteadyStateTerm = {
  name: string;
  compressedPerSample: number;
  uncompressedPerSample: number;
  /** The share of the retention's samples whose chunks are compressed, and uncompressed. */
  compressedShare: number;
  uncompressedShare: number;
  perSample: number;
};

export type SteadyState = {
  retentionHours: number;
  terms: SteadyStateTerm[];
  /** series and services, over the samples each series holds over the retention. */
  dictionaryPerSample: number;
  total: number;
};

/**
 * The steady state from measured parts. A relation whose chunks were all in one state gives
 * that state's bytes for both (the other was not measured); one without either is an error.
 */
export function steadyState(input: {
  parts: readonly MeasuredParts[];
  /** Hours each relation's chunks stay uncompressed (`uncompressedHours`), by name. */
  uncompressedHoursOf: Readonly<Record<string, number>>;
  /**
   * Hours of the retention a relation holds rows for, by name, when not all of it: samples_1m
   * is materialized only for the last hours before the raw retention drops its samples.
   */
  heldHoursOf?: Readonly<Record<string, number>>;
  retentionHours: number;
  dictionaryBytes: number;
  /** Raw samples measured, and the hours of history they span. */
  samples: number;
  historyHours: number;
}): SteadyState {
  const terms = input.parts.map((part): SteadyStateTerm => {
    const perSample = (p: ChunkPart) => (p.samples > 0 ? p.bytes / p.samples : undefined);
    const compressed = perSample(part.compressed) ?? perSample(part.uncompressed);
    const uncompressed = perSample(part.uncompressed) ?? compressed;
    if (compressed === undefined || uncompressed === undefined)
      throw new RangeError(`nothing measured of ${part.name}`);
    const hours = input.uncompressedHoursOf[part.name];
    if (hours === undefined) throw new RangeError(`no uncompressed window for ${part.name}`);
    const held = Math.min(input.retentionHours, input.heldHoursOf?.[part.name] ?? Infinity);
    const uncompressedShare = Math.min(held, hours) / input.retentionHours;
    const compressedShare = held / input.retentionHours - uncompressedShare;
    return {
      name: part.name,
      compressedPerSample: compressed,
      uncompressedPerSample: uncompressed,
      compressedShare,
      uncompressedShare,
      perSample: compressed * compressedShare + uncompressed * uncompressedShare,
    };
  });
  const samplesAtRetention = (input.samples * input.retentionHours) / input.historyHours;
  const dictionaryPerSample = input.dictionaryBytes / samplesAtRetention;
  const total = terms.reduce((sum, term) => sum + term.perSample, dictionaryPerSample);
  return { retentionHours: input.retentionHours, terms, dictionaryPerSample, total };
}

/** The steady state's arithmetic, one line a term, for the report. */
export function formatSteadyState(state: SteadyState): string[] {
  const f = (n: number, digits = 3) => n.toFixed(digits);
  return [
    `steady state (raw retention ${state.retentionHours / 24} days), bytes per raw sample:`,
    ...state.terms.map(
      (t) =>
        `  ${t.name.padEnd(12)} ${f(t.compressedPerSample)} compressed × ${f(t.compressedShare)} + ` +
        `${f(t.uncompressedPerSample)} uncompressed × ${f(t.uncompressedShare)} = ${f(t.perSample)}`,
    ),
    `  series and services over the retention's samples: ${f(state.dictionaryPerSample)}`,
    `  total: ${state.terms.map((t) => f(t.perSample)).join(' + ')} + ${f(state.dictionaryPerSample)} = ${f(state.total)}`,
  ];
}

/**
 * Measures each hypertable's compressed and uncompressed chunks (bytes with their indexes and
 * TOAST) and the raw samples of their time ranges.
 */
export async function measureParts(
  db: Database,
  relations: readonly string[],
): Promise<MeasuredParts[]> {
  const parts: MeasuredParts[] = [];
  for (const name of relations) {
    const chunks = await listChunkParts(db, name);
    const part: MeasuredParts = {
      name,
      compressed: { bytes: 0, samples: 0 },
      uncompressed: { bytes: 0, samples: 0 },
    };
    for (const chunk of chunks) {
      const samples = await countSamplesBetween(db, chunk.startMs, chunk.endMs);
      const into = chunk.compressed ? part.compressed : part.uncompressed;
      into.bytes += chunk.bytes;
      into.samples += samples;
    }
    parts.push(part);
  }
  return parts;
}
