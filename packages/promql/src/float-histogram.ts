// Prometheus v0.42.0's FloatHistogram arithmetic (model/histogram/float_histogram.go and
// generic.go; Apache License 2.0, Copyright 2022 The Prometheus Authors), ported so that sums,
// rates and quantiles of native histograms equal Prometheus 2.42's to the bit: same bucket
// layouts (spans), same order of additions.
import { exponentialBounds } from './histogram-bounds.js';

/** Consecutive buckets: `offset` from the end of the span before (the first: from bucket 0). */
type Span = { offset: number; length: number };

/**
 * A native histogram as PromQL computes with it: absolute float counts over a base-2
 * exponential layout (the fields of @monitor/schemas' NativeHistogram that PromQL reads).
 */
export type FloatHistogram = {
  schema: number;
  zeroThreshold: number;
  zeroCount: number;
  count: number;
  sum: number;
  positiveSpans: Span[];
  positiveBuckets: number[];
  negativeSpans: Span[];
  negativeBuckets: number[];
};

/** One bucket with its bounds, as Prometheus' bucket iterators give it. */
export type HistogramBucket = {
  lower: number;
  upper: number;
  lowerInclusive: boolean;
  upperInclusive: boolean;
  count: number;
  index: number;
};

/** A deep copy, with only the fields PromQL reads. */
export function copyHistogram(h: FloatHistogram): FloatHistogram {
  return {
    schema: h.schema,
    zeroThreshold: h.zeroThreshold,
    zeroCount: h.zeroCount,
    count: h.count,
    sum: h.sum,
    positiveSpans: h.positiveSpans.map((s) => ({ ...s })),
    positiveBuckets: [...h.positiveBuckets],
    negativeSpans: h.negativeSpans.map((s) => ({ ...s })),
    negativeBuckets: [...h.negativeBuckets],
  };
}

/** A copy in `targetSchema`, which must be ≤ h's (lower resolution). */
export function copyToSchema(h: FloatHistogram, targetSchema: number): FloatHistogram {
  if (targetSchema === h.schema) return copyHistogram(h);
  if (targetSchema > h.schema) {
    throw new Error(`cannot copy from schema ${h.schema} to ${targetSchema}`);
  }
  const c: FloatHistogram = {
    schema: targetSchema,
    zeroThreshold: h.zeroThreshold,
    zeroCount: h.zeroCount,
    count: h.count,
    sum: h.sum,
    positiveSpans: [],
    positiveBuckets: [],
    negativeSpans: [],
    negativeBuckets: [],
  };
  addAll(c, h, 0, targetSchema, 1);
  return c;
}

/** Every count and the sum times `factor`, in place. */
export function scaleHistogram(h: FloatHistogram, factor: number): FloatHistogram {
  h.zeroCount *= factor;
  h.count *= factor;
  h.sum *= factor;
  for (let i = 0; i < h.positiveBuckets.length; i++) h.positiveBuckets[i]! *= factor;
  for (let i = 0; i < h.negativeBuckets.length; i++) h.negativeBuckets[i]! *= factor;
  return h;
}

/**
 * `other` added to h in place; other's schema must be ≥ h's. The zero buckets are reconciled
 * (the wider threshold wins); buckets h lacks are inserted.
 */
export function addHistogram(h: FloatHistogram, other: FloatHistogram): FloatHistogram {
  const otherZeroCount = reconcileZeroBuckets(h, other);
  h.zeroCount += otherZeroCount;
  h.count += other.count;
  h.sum += other.sum;
  addAll(h, other, h.zeroThreshold, h.schema, 1);
  return h;
}

/** `other` subtracted from h in place, as addHistogram adds. */
export function subHistogram(h: FloatHistogram, other: FloatHistogram): FloatHistogram {
  const otherZeroCount = reconcileZeroBuckets(h, other);
  h.zeroCount -= otherZeroCount;
  h.count -= other.count;
  h.sum -= other.sum;
  addAll(h, other, h.zeroThreshold, h.schema, -1);
  return h;
}

/** Adds `sign` × each of from's buckets (merged to targetSchema, above threshold) into `into`. */
function addAll(
  into: FloatHistogram,
  from: FloatHistogram,
  threshold: number,
  targetSchema: number,
  sign: 1 | -1,
): void {
  for (const positive of [true, false]) {
    const spans = positive ? into.positiveSpans : into.negativeSpans;
    const buckets = positive ? into.positiveBuckets : into.negativeBuckets;
    const at: BucketCoordinates = { iSpan: -1, iBucket: -1, iInSpan: 0, index: 0 };
    const it = new FloatBucketIterator(from, positive, threshold, targetSchema);
    while (it.next()) {
      const b = it.at();
      addBucket(b.index, sign === 1 ? b.count : -b.count, spans, buckets, at);
      at.index = b.index;
    }
  }
}

/** Where addBucket added the last bucket, so that the next one starts from there. */
type BucketCoordinates = { iSpan: number; iBucket: number; iInSpan: number; index: number };

/**
 * Adds `count` at bucket `index`, after the bucket at `at`: to the bucket if it exists, else
 * inserted, extending or splitting spans. `spans` and `buckets` change in place.
 */
function addBucket(
  index: number,
  count: number,
  spans: Span[],
  buckets: number[],
  at: BucketCoordinates,
): void {
  if (at.iSpan === -1) {
    // The first add: before all spans?
    const first = spans[0];
    if (first === undefined || first.offset > index) {
      buckets.unshift(count);
      if (first !== undefined && first.offset === index + 1) {
        first.length++;
        first.offset--;
      } else {
        spans.unshift({ offset: index, length: 1 });
        // The formerly first span's offset becomes relative.
        if (spans.length > 1) spans[1]!.offset -= index + 1;
      }
      setCoordinates(at, 0, 0, 0);
      return;
    }
    if (first.offset === index) {
      buckets[0]! += count;
      setCoordinates(at, 0, 0, 0);
      return;
    }
    // Behind the first bucket: go on from there.
    setCoordinates(at, 0, 0, 0);
    at.index = first.offset;
  }
  let deltaIndex = index - at.index;
  for (;;) {
    const remainingInSpan = spans[at.iSpan]!.length - at.iInSpan;
    if (deltaIndex < remainingInSpan) {
      // In the current span.
      at.iBucket += deltaIndex;
      at.iInSpan += deltaIndex;
      buckets[at.iBucket]! += count;
      return;
    }
    deltaIndex -= remainingInSpan;
    at.iBucket += remainingInSpan;
    at.iSpan++;
    const next = spans[at.iSpan];
    if (next === undefined || deltaIndex < next.offset) {
      // In the gap behind the previous span (or there is no further span).
      buckets.splice(at.iBucket, 0, count);
      if (deltaIndex === 0) {
        // Right after the previous span: extend it.
        if (next !== undefined) next.offset--;
        at.iSpan--;
        const previous = spans[at.iSpan]!;
        at.iInSpan = previous.length;
        previous.length++;
        return;
      }
      if (next !== undefined && deltaIndex === next.offset - 1) {
        // Right before the next span: extend that one.
        at.iInSpan = 0;
        next.offset--;
        next.length++;
        return;
      }
      // A span of its own.
      at.iInSpan = 0;
      if (next !== undefined) next.offset -= deltaIndex + 1;
      spans.splice(at.iSpan, 0, { offset: deltaIndex, length: 1 });
      return;
    }
    // Try the start of the next span.
    deltaIndex -= next.offset;
    at.iInSpan = 0;
  }
}

function setCoordinates(at: BucketCoordinates, iSpan: number, iBucket: number, iInSpan: number) {
  at.iSpan = iSpan;
  at.iBucket = iBucket;
  at.iInSpan = iInSpan;
}

/**
 * Empty buckets removed and spans merged or split accordingly, in place (Prometheus'
 * Compact(0)).
 */
export function compactHistogram(h: FloatHistogram): FloatHistogram {
  [h.positiveBuckets, h.positiveSpans] = compactBuckets(h.positiveBuckets, h.positiveSpans);
  [h.negativeBuckets, h.negativeSpans] = compactBuckets(h.negativeBuckets, h.negativeSpans);
  return h;
}

/** generic.go's compactBuckets with maxEmptyBuckets 0 and absolute counts. */
function compactBuckets(buckets: number[], spans: Span[]): [number[], Span[]] {
  let nothingToDo = !buckets.includes(0);
  if (nothingToDo) {
    for (const span of spans) {
      if (span.offset <= 0 || span.length === 0) {
        nothingToDo = false;
        break;
      }
    }
    if (nothingToDo) return [buckets, spans];
  }

  // Spans with offset 0 merged into the one before.
  let iSpan = 0;
  if (spans.length > 1) {
    for (let i = 1; i < spans.length; i++) {
      const span = spans[i]!;
      if (span.offset === 0) {
        spans[iSpan]!.length += span.length;
        continue;
      }
      iSpan++;
      if (i !== iSpan) spans[iSpan] = span;
    }
    spans.length = iSpan + 1;
    iSpan = 0;
  }
  // Spans of length 0 dropped.
  for (let i = 0; i < spans.length; i++) {
    const span = spans[i]!;
    if (span.length === 0) {
      if (i + 1 < spans.length) spans[i + 1]!.offset += span.offset;
      continue;
    }
    if (i !== iSpan) spans[iSpan] = span;
    iSpan++;
  }
  spans.length = iSpan;
  iSpan = 0;

  let iBucket = 0;
  let posInSpan = 0;
  const emptyBucketsHere = (): number => {
    let i = 0;
    let abs = buckets[iBucket]!;
    while (i + posInSpan < spans[iSpan]!.length && abs === 0) {
      i++;
      if (i + iBucket >= buckets.length) break;
      abs = buckets[i + iBucket]!;
    }
    return i;
  };
  while (iBucket < buckets.length) {
    const nEmpty = emptyBucketsHere();
    if (nEmpty > 0) {
      buckets.splice(iBucket, nEmpty);
      const span = spans[iSpan]!;
      if (posInSpan === 0) {
        if (nEmpty === span.length) {
          spans.splice(iSpan, 1);
          if (spans.length > iSpan) spans[iSpan]!.offset += span.offset + nEmpty;
          continue;
        }
        span.length -= nEmpty;
        span.offset += nEmpty;
        continue;
      }
      const newSpan = { offset: nEmpty, length: span.length - posInSpan - nEmpty };
      span.length = posInSpan;
      iSpan++;
      posInSpan = 0;
      if (newSpan.length === 0) {
        if (iSpan < spans.length) spans[iSpan]!.offset += nEmpty;
        continue;
      }
      spans.splice(iSpan, 0, newSpan);
      continue;
    }
    iBucket++;
    posInSpan++;
    if (posInSpan >= spans[iSpan]!.length) {
      posInSpan = 0;
      iSpan++;
    }
  }
  return [buckets, spans];
}

/**
 * Whether h, following `previous`, is a counter reset: a count went down, a populated bucket
 * went missing, or the resolution rose or the zero threshold fell (which only a reset does).
 */
export function detectReset(h: FloatHistogram, previous: FloatHistogram): boolean {
  if (h.count < previous.count) return true;
  if (h.schema > previous.schema) return true;
  if (h.zeroThreshold < previous.zeroThreshold) return true;
  const [previousZeroCount, newThreshold] = zeroCountForLargerThreshold(previous, h.zeroThreshold);
  // The threshold falls within a populated bucket of the previous histogram.
  if (newThreshold !== h.zeroThreshold) return true;
  if (h.zeroCount < previousZeroCount) return true;
  for (const positive of [true, false]) {
    const curr = new FloatBucketIterator(h, positive, h.zeroThreshold, h.schema);
    const prev = new FloatBucketIterator(previous, positive, h.zeroThreshold, h.schema);
    if (detectBucketReset(curr, prev)) return true;
  }
  return false;
}

function detectBucketReset(curr: FloatBucketIterator, prev: FloatBucketIterator): boolean {
  const populatedRest = (): boolean => {
    do {
      if (prev.at().count !== 0) return true;
    } while (prev.next());
    return false;
  };
  // Nothing in the previous histogram: nothing to reset.
  if (!prev.next()) return false;
  if (!curr.next()) return populatedRest();
  let currBucket = curr.at();
  for (;;) {
    const prevBucket = prev.at();
    while (currBucket.index < prevBucket.index) {
      if (!curr.next()) return populatedRest();
      currBucket = curr.at();
    }
    if (currBucket.index > prevBucket.index) {
      if (prevBucket.count !== 0) return true;
    } else if (currBucket.count < prevBucket.count) {
      return true;
    }
    if (!prev.next()) return false;
  }
}

/**
 * What h's zero count would be with the larger threshold, and that threshold, moved up to the
 * bound of a populated bucket it would fall within.
 */
function zeroCountForLargerThreshold(
  h: FloatHistogram,
  largerThreshold: number,
): [count: number, threshold: number] {
  if (largerThreshold === h.zeroThreshold) return [h.zeroCount, largerThreshold];
  if (largerThreshold < h.zeroThreshold) {
    throw new Error(`new threshold ${largerThreshold} is less than old ${h.zeroThreshold}`);
  }
  let threshold = largerThreshold;
  outer: for (;;) {
    let count = h.zeroCount;
    const pos = new FloatBucketIterator(h, true, 0, h.schema);
    while (pos.next()) {
      const b = pos.at();
      if (b.lower >= threshold) break;
      count += b.count;
      if (b.upper > threshold) {
        if (b.count !== 0) threshold = b.upper;
        break;
      }
    }
    const neg = new FloatBucketIterator(h, false, 0, h.schema);
    while (neg.next()) {
      const b = neg.at();
      if (b.upper <= -threshold) break;
      count += b.count;
      if (b.lower < -threshold) {
        if (b.count !== 0) {
          // The positive side must be redone with the new threshold.
          threshold = -b.lower;
          continue outer;
        }
        break;
      }
    }
    return [count, threshold];
  }
}

/** Zeroes the buckets within the zero bucket (their counts already in it) and compacts. */
function trimBucketsInZeroBucket(h: FloatHistogram): void {
  let bucketsIdx = 0;
  const pos = new FloatBucketIterator(h, true, 0, h.schema);
  while (pos.next()) {
    if (pos.at().lower >= h.zeroThreshold) break;
    h.positiveBuckets[bucketsIdx++] = 0;
  }
  bucketsIdx = 0;
  const neg = new FloatBucketIterator(h, false, 0, h.schema);
  while (neg.next()) {
    if (neg.at().upper <= -h.zeroThreshold) break;
    h.negativeBuckets[bucketsIdx++] = 0;
  }
  compactHistogram(h);
}

/**
 * Widens h's zero bucket to hold both histograms' (changing h) and answers the zero count
 * `other` would have with that threshold.
 */
function reconcileZeroBuckets(h: FloatHistogram, other: FloatHistogram): number {
  let otherZeroCount = other.zeroCount;
  let otherZeroThreshold = other.zeroThreshold;
  while (otherZeroThreshold !== h.zeroThreshold) {
    if (h.zeroThreshold > otherZeroThreshold) {
      [otherZeroCount, otherZeroThreshold] = zeroCountForLargerThreshold(other, h.zeroThreshold);
    }
    if (otherZeroThreshold > h.zeroThreshold) {
      [h.zeroCount, h.zeroThreshold] = zeroCountForLargerThreshold(h, otherZeroThreshold);
      trimBucketsInZeroBucket(h);
    }
  }
  return otherZeroCount;
}

/** Go's math.Ldexp for the exponents bucket bounds reach (up to 1025). */
function ldexp(frac: number, exp: number): number {
  if (exp > 1023) return frac * 2 * 2 ** (exp - 1);
  return frac * 2 ** exp;
}

/** The upper bound of bucket `idx` in `schema` (generic.go's getBound). */
function bucketBound(idx: number, schema: number): number {
  if (schema < 0) {
    const exp = idx << -schema;
    // The last bucket before the one for ±Inf observations.
    if (exp === 1024) return Number.MAX_VALUE;
    return ldexp(1, exp);
  }
  const frac = exponentialBounds[schema]![idx & ((1 << schema) - 1)]!;
  const exp = (idx >> schema) + 1;
  if (frac === 0.5 && exp === 1025) return Number.MAX_VALUE;
  return ldexp(frac, exp);
}

function bucketAt(index: number, count: number, schema: number, positive: boolean) {
  const bucket: HistogramBucket = positive
    ? {
        lower: bucketBound(index - 1, schema),
        upper: bucketBound(index, schema),
        lowerInclusive: false,
        upperInclusive: false,
        count,
        index,
      }
    : {
        lower: -bucketBound(index, schema),
        upper: -bucketBound(index - 1, schema),
        lowerInclusive: false,
        upperInclusive: false,
        count,
        index,
      };
  bucket.lowerInclusive = bucket.lower < 0;
  bucket.upperInclusive = bucket.upper > 0;
  return bucket;
}

/**
 * The buckets of one side in ascending order of absolute value, merged into `targetSchema`
 * (≤ the histogram's), skipping those with an upper bound ≤ absoluteStartValue.
 */
class FloatBucketIterator {
  private readonly spans: Span[];
  private readonly buckets: number[];
  private spansIdx = 0;
  private idxInSpan = 0;
  private bucketsIdx = 0;
  private origIdx = 0;
  private currIdx = 0;
  private currCount = 0;

  constructor(
    h: FloatHistogram,
    private readonly positive: boolean,
    private readonly absoluteStartValue: number,
    private readonly targetSchema: number,
  ) {
    if (targetSchema > h.schema) {
      throw new Error(`cannot merge from schema ${h.schema} to ${targetSchema}`);
    }
    this.schema = h.schema;
    this.spans = positive ? h.positiveSpans : h.negativeSpans;
    this.buckets = positive ? h.positiveBuckets : h.negativeBuckets;
  }

  private readonly schema: number;

  next(): boolean {
    for (;;) {
      if (this.spansIdx >= this.spans.length) return false;
      let { origIdx, spansIdx, idxInSpan } = this;
      let span = this.spans[spansIdx]!;
      let firstPass = true;
      this.currCount = 0;
      // Every bucket of the original schema that falls into one of the target schema.
      merge: for (;;) {
        if (this.bucketsIdx === 0) origIdx = span.offset;
        else origIdx++;
        while (idxInSpan >= span.length) {
          idxInSpan = 0;
          spansIdx++;
          if (spansIdx >= this.spans.length) {
            if (firstPass) return false;
            break merge;
          }
          span = this.spans[spansIdx]!;
          origIdx += span.offset;
        }
        const currIdx = this.targetIdx(origIdx);
        if (firstPass) {
          this.currIdx = currIdx;
          firstPass = false;
        } else if (currIdx !== this.currIdx) {
          break merge;
        }
        this.currCount += this.buckets[this.bucketsIdx]!;
        idxInSpan++;
        this.bucketsIdx++;
        this.origIdx = origIdx;
        this.spansIdx = spansIdx;
        this.idxInSpan = idxInSpan;
        if (this.schema === this.targetSchema) break merge;
      }
      if (bucketBound(this.currIdx, this.targetSchema) > this.absoluteStartValue) return true;
    }
  }

  private targetIdx(idx: number): number {
    if (this.schema === this.targetSchema) return idx;
    return ((idx - 1) >> (this.schema - this.targetSchema)) + 1;
  }

  at(): HistogramBucket {
    return bucketAt(this.currIdx, this.currCount, this.targetSchema, this.positive);
  }
}

/** One side's buckets from the highest index down (newReverseFloatBucketIterator). */
function* reverseBuckets(
  spans: Span[],
  buckets: number[],
  schema: number,
  positive: boolean,
): Generator<HistogramBucket> {
  let spansIdx = spans.length - 1;
  let bucketsIdx = buckets.length - 1;
  let idxInSpan = spansIdx >= 0 ? spans[spansIdx]!.length - 1 : 0;
  let currIdx = 0;
  for (const s of spans) currIdx += s.offset + s.length;
  for (;;) {
    currIdx--;
    if (bucketsIdx < 0) return;
    while (idxInSpan < 0) {
      spansIdx--;
      idxInSpan = spans[spansIdx]!.length - 1;
      currIdx -= spans[spansIdx + 1]!.offset;
    }
    yield bucketAt(currIdx, buckets[bucketsIdx]!, schema, positive);
    bucketsIdx--;
    idxInSpan--;
  }
}

/**
 * Every bucket from the lowest to the highest: negative ones, the zero bucket when it holds
 * observations, positive ones; bounds clipped to the zero threshold (AllBucketIterator).
 */
export function* allBuckets(h: FloatHistogram): Generator<HistogramBucket> {
  for (const b of reverseBuckets(h.negativeSpans, h.negativeBuckets, h.schema, false)) {
    if (b.upper > -h.zeroThreshold) b.upper = -h.zeroThreshold;
    yield b;
  }
  if (h.zeroCount > 0) {
    yield {
      lower: -h.zeroThreshold,
      upper: h.zeroThreshold,
      lowerInclusive: true,
      upperInclusive: true,
      count: h.zeroCount,
      index: 0,
    };
  }
  const pos = new FloatBucketIterator(h, true, 0, h.schema);
  while (pos.next()) {
    const b = pos.at();
    if (b.lower < h.zeroThreshold) b.lower = h.zeroThreshold;
    yield b;
  }
}
