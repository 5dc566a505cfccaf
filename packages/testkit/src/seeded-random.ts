/** A seeded pseudo-random source (mulberry32): the same seed gives the same data, every run. */
export type SeededRandom = {
  /** Uniform in [0, 1). A plain function: pass it on alone (`const random = source.next`). */
  next: () => number;
  /** Normally distributed with the given mean and standard deviation. */
  gaussian: (mean: number, stddev: number) => number;
};

export function createSeededRandom(seed: number): SeededRandom {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    gaussian(mean, stddev) {
      // Box–Muller; 1 - next() keeps log away from 0.
      const u = 1 - next();
      const v = next();
      return mean + stddev * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    },
  };
}
