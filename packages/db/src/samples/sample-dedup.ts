/**
 * A sample at a timestamp its series already holds (docs/api.md, "A sample at a timestamp
 * already stored"): for one series the first value stored at a timestamp stands. The same point
 * again (a replay, an agent's retry of the same body) is stored once, a different value is
 * dropped and counted. NaN equals NaN here, and −0 differs from 0 (bit for bit, as stored).
 *
 * The store decides this before it writes, so that no index has to: a point later than every
 * point its series has stored (`storedNewestBound`) cannot be stored yet and goes straight in;
 * only a point at or before that bound (an agent's retry, a late sample, a series the writer
 * has not seen since it started) is looked up first (`resolveChecks`). Within a batch the
 * first point of a (series, time) by arrival is its lead, the others its followers.
 */

/** A batch's points as the check sees them; rows are the indexes of the store's columns. */
export type DedupInput = {
  samples: {
    seriesIds: readonly number[];
    timesMs: readonly number[];
    values: readonly number[];
  };
  /** The samples' rows by series id, then time, then arrival (`seriesOrder`). */
  order: Uint32Array;
  unaggregated: {
    seriesIds: readonly number[];
    timesMs: readonly number[];
    values: readonly number[];
    /** For each row, how many sample rows arrived before it (its place among them). */
    samplesBefore: readonly number[];
  };
  /**
   * A time at or after every stored point of the series (−Infinity when it has none): the
   * batch's points after it are not stored yet.
   */
  storedNewestBound(seriesId: number): number;
};

/** A point that may be stored already: the lead of its (series, time) in the batch. */
export type CheckedPoint = {
  seriesId: number;
  timeMs: number;
  value: number;
  table: 'samples' | 'unaggregated';
  row: number;
  /** The values of the batch's later points at the same (series, time). */
  followers: number[];
};

export type DedupPlan = {
  /** 1 for each sample row to store, once `resolveChecks` settled the checked ones. */
  keepSamples: Uint8Array;
  keepUnaggregated: Uint8Array;
  checks: CheckedPoint[];
  /** Points dropped as the same value again. */
  sameValues: number;
  /** Points dropped for a different value at a time already held. */
  differentValues: number;
  /**
   * Per series of the batch, its newest bound once the batch is stored: at or after its bound
   * before, and its points of the batch. A series may appear twice (the larger bound counts).
   */
  newest: { seriesIds: number[]; timesMs: number[] };
};

/** Whether two values are the same point's: bit for bit, except that every NaN is NaN. */
export function sameValue(a: number, b: number): boolean {
  return Object.is(a, b);
}

/**
 * Which of the batch's points go in at once, which need a look at what is stored, and which
 * are dropped as later points of a (series, time) the batch already holds.
 */
export function planDedup(input: DedupInput): DedupPlan {
  const { samples, order, unaggregated } = input;
  const plan: DedupPlan = {
    keepSamples: new Uint8Array(samples.seriesIds.length),
    keepUnaggregated: new Uint8Array(unaggregated.seriesIds.length),
    checks: [],
    sameValues: 0,
    differentValues: 0,
    newest: { seriesIds: [], timesMs: [] },
  };
  const leads = unaggregated.seriesIds.length > 0 ? unaggregatedLeads(input, plan) : undefined;
  let seriesId = Number.NaN;
  let bound = Number.NEGATIVE_INFINITY;
  let previousTimeMs = Number.NaN;
  // The lead of the previous row's (series, time): its value, and its check if it has one.
  let leadValue = 0;
  let leadPoint: CheckedPoint | undefined;
  for (let i = 0; i < order.length; i++) {
    const row = order[i] as number;
    const id = samples.seriesIds[row] as number;
    const timeMs = samples.timesMs[row] as number;
    const value = samples.values[row] as number;
    if (id !== seriesId) {
      if (i > 0) raiseNewest(plan, seriesId, Math.max(bound, previousTimeMs));
      seriesId = id;
      bound = input.storedNewestBound(id);
      previousTimeMs = Number.NaN;
    }
    if (timeMs === previousTimeMs) {
      follow(plan, leadValue, leadPoint, value);
      continue;
    }
    previousTimeMs = timeMs;
    const unaggregatedLead = leads?.get(id)?.get(timeMs);
    if (unaggregatedLead !== undefined && unaggregatedLead.before <= row) {
      // An unaggregated point of this (series, time) arrived first: it leads.
      leadValue = unaggregatedLead.value;
      leadPoint = unaggregatedLead.point;
      follow(plan, leadValue, leadPoint, value);
      continue;
    }
    leadValue = value;
    if (timeMs > bound) {
      plan.keepSamples[row] = 1;
      leadPoint = undefined;
    } else {
      leadPoint = { seriesId: id, timeMs, value, table: 'samples', row, followers: [] };
      plan.checks.push(leadPoint);
    }
    if (unaggregatedLead !== undefined) {
      // This sample arrived before the unaggregated points of its (series, time).
      unaggregatedLead.drop();
      for (const each of unaggregatedLead.values) follow(plan, leadValue, leadPoint, each);
    }
  }
  // Rows of a series come in time order: its last one is its newest.
  if (order.length > 0) raiseNewest(plan, seriesId, Math.max(bound, previousTimeMs));
  return plan;
}

type UnaggregatedLead = {
  /** The lead's value, and its check if it has one. */
  value: number;
  point: CheckedPoint | undefined;
  /** Sample rows before it (a sample row at or past this arrived after it). */
  before: number;
  /** The values of the lead and its unaggregated followers, in arrival order. */
  values: number[];
  /** Drops the lead and forgets its followers: a sample of the same point arrived first. */
  drop(): void;
};

/**
 * The unaggregated rows (few: NaN, ±Inf, huge values), each (series, time)'s first one kept or
 * checked and its later ones following it, by series id then time.
 */
function unaggregatedLeads(
  input: DedupInput,
  plan: DedupPlan,
): Map<number, Map<number, UnaggregatedLead>> {
  const { unaggregated } = input;
  const leads = new Map<number, Map<number, UnaggregatedLead>>();
  for (let row = 0; row < unaggregated.seriesIds.length; row++) {
    const id = unaggregated.seriesIds[row] as number;
    const timeMs = unaggregated.timesMs[row] as number;
    const value = unaggregated.values[row] as number;
    let byTime = leads.get(id);
    if (byTime === undefined) {
      byTime = new Map();
      leads.set(id, byTime);
    }
    raiseNewest(plan, id, Math.max(input.storedNewestBound(id), timeMs));
    const existing = byTime.get(timeMs);
    if (existing !== undefined) {
      existing.values.push(value);
      follow(plan, existing.value, existing.point, value);
      continue;
    }
    let point: CheckedPoint | undefined;
    if (timeMs > input.storedNewestBound(id)) plan.keepUnaggregated[row] = 1;
    else {
      point = { seriesId: id, timeMs, value, table: 'unaggregated', row, followers: [] };
      plan.checks.push(point);
    }
    const entry: UnaggregatedLead = {
      value,
      point,
      before: unaggregated.samplesBefore[row] as number,
      values: [value],
      drop() {
        if (point === undefined) {
          plan.keepUnaggregated[row] = 0;
          for (const follower of entry.values.slice(1)) uncount(plan, value, follower);
        } else plan.checks.splice(plan.checks.indexOf(point), 1);
      },
    };
    byTime.set(timeMs, entry);
  }
  return leads;
}

function raiseNewest(plan: DedupPlan, seriesId: number, timeMs: number): void {
  plan.newest.seriesIds.push(seriesId);
  plan.newest.timesMs.push(timeMs);
}

/**
 * A later point of a lead's (series, time): dropped, and counted against the lead when it is
 * kept (against what stands once checked, when it is checked).
 */
function follow(
  plan: DedupPlan,
  leadValue: number,
  leadPoint: CheckedPoint | undefined,
  value: number,
): void {
  if (leadPoint === undefined) count(plan, leadValue, value);
  else leadPoint.followers.push(value);
}

function count(plan: DedupPlan, standing: number, value: number): void {
  if (sameValue(standing, value)) plan.sameValues++;
  else plan.differentValues++;
}

function uncount(plan: DedupPlan, standing: number, value: number): void {
  if (sameValue(standing, value)) plan.sameValues--;
  else plan.differentValues--;
}

/** The stored value of each (series, time) that a check found, by series then time. */
export type StoredPoints = ReadonlyMap<number, ReadonlyMap<number, number>>;

/**
 * Settles the checked points: one already stored is dropped (its followers too), counted
 * against the stored value; one not stored is kept, its followers counted against it.
 */
export function resolveChecks(plan: DedupPlan, stored: StoredPoints): void {
  for (const point of plan.checks) {
    const standing = stored.get(point.seriesId)?.get(point.timeMs);
    if (standing === undefined) {
      (point.table === 'samples' ? plan.keepSamples : plan.keepUnaggregated)[point.row] = 1;
      for (const value of point.followers) count(plan, point.value, value);
    } else {
      count(plan, standing, point.value);
      for (const value of point.followers) count(plan, standing, value);
    }
  }
}
