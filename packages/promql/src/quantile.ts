/** A classic histogram bucket: its `le` and cumulative count. */
export type Bucket = { upperBound: number; count: number };

/** Prometheus' `vectorByValueHeap.Less`: NaN sorts first. */
export function valueLess(a: number, b: number): boolean {
  if (Number.isNaN(a)) return true;
  return a < b;
}

function coalesceBuckets(buckets: Bucket[]): Bucket[] {
  let last = { ...buckets[0]! };
  let i = 0;
  for (const b of buckets.slice(1)) {
    if (b.upperBound === last.upperBound) {
      last.count += b.count;
    } else {
      buckets[i] = last;
      last = { ...b };
      i++;
    }
  }
  buckets[i] = last;
  return buckets.slice(0, i + 1);
}

function ensureMonotonic(buckets: Bucket[]): void {
  let max = buckets[0]!.count;
  for (let i = 1; i < buckets.length; i++) {
    const count = buckets[i]!.count;
    if (count > max) max = count;
    else if (count < max) buckets[i]!.count = max;
  }
}

/** First index in [0, n) for which `pred` holds (Go's sort.Search). */
function search(n: number, pred: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (!pred(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** histogram_quantile over classic buckets, as Prometheus 2.42's `bucketQuantile`. */
export function bucketQuantile(q: number, input: Bucket[]): number {
  if (Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  let buckets = [...input].sort((a, b) => a.upperBound - b.upperBound);
  if (buckets[buckets.length - 1]!.upperBound !== Infinity) return NaN;
  buckets = coalesceBuckets(buckets);
  ensureMonotonic(buckets);
  if (buckets.length < 2) return NaN;
  const observations = buckets[buckets.length - 1]!.count;
  if (observations === 0) return NaN;
  let rank = q * observations;
  const b = search(buckets.length - 1, (i) => buckets[i]!.count >= rank);
  if (b === buckets.length - 1) return buckets[buckets.length - 2]!.upperBound;
  if (b === 0 && buckets[0]!.upperBound <= 0) return buckets[0]!.upperBound;
  let bucketStart = 0;
  const bucketEnd = buckets[b]!.upperBound;
  let count = buckets[b]!.count;
  if (b > 0) {
    bucketStart = buckets[b - 1]!.upperBound;
    count -= buckets[b - 1]!.count;
    rank -= buckets[b - 1]!.count;
  }
  return bucketStart + (bucketEnd - bucketStart) * (rank / count);
}

/** The φ-quantile of values (the `quantile` aggregation and quantile_over_time). */
export function quantile(q: number, input: number[]): number {
  if (input.length === 0 || Number.isNaN(q)) return NaN;
  if (q < 0) return -Infinity;
  if (q > 1) return Infinity;
  const values = [...input].sort((a, b) => (valueLess(a, b) ? -1 : valueLess(b, a) ? 1 : 0));
  const n = values.length;
  const rank = q * (n - 1);
  const lowerIndex = Math.max(0, Math.floor(rank));
  const upperIndex = Math.min(n - 1, lowerIndex + 1);
  const weight = rank - Math.floor(rank);
  return values[lowerIndex]! * (1 - weight) + values[upperIndex]! * weight;
}

/** Neumaier's improved Kahan step, as Prometheus' `kahanSumInc`. */
export function kahanSumInc(inc: number, sum: number, c: number): [number, number] {
  const t = sum + inc;
  if (Math.abs(sum) >= Math.abs(inc)) c += sum - t + inc;
  else c += inc - t + sum;
  return [t, c];
}
