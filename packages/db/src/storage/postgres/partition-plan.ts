/** Tables that plain-PostgreSQL mode range-partitions by day on `time`. */
export const partitionedTables = [
  'samples',
  'snapshots',
  'stale_markers',
  'unaggregated_samples',
  'exemplars',
  'histogram_chunks',
] as const;
export type PartitionedTable = (typeof partitionedTables)[number];

/** One daily partition: rows with `from <= time < to` (UTC days). */
export type DailyPartition = { name: string; from: Date; to: Date };

export type PartitionPlan = {
  /** Partitions to create, oldest first. */
  create: DailyPartition[];
  /** Existing partitions whose every row is past retention. */
  drop: string[];
  /** Rows older than this are past retention (also in the default partition). */
  cutoff: Date;
};

const dayMs = 86_400_000;

/** `samples_p20261122` for the UTC day containing `day`. */
export function partitionName(table: PartitionedTable, day: Date): string {
  const iso = startOfUtcDay(day).toISOString();
  return `${table}_p${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}`;
}

/** The partition of `table` covering the UTC day that contains `day`. */
export function dailyPartition(table: PartitionedTable, day: Date): DailyPartition {
  const from = startOfUtcDay(day);
  return { name: partitionName(table, from), from, to: new Date(from.getTime() + dayMs) };
}

/**
 * The day a partition name stands for, or undefined for any other table (the default
 * partition, or something an operator attached by hand, which maintenance leaves alone).
 */
export function parsePartitionDay(table: PartitionedTable, name: string): Date | undefined {
  const match = new RegExp(`^${table}_p(\\d{4})(\\d{2})(\\d{2})$`).exec(name);
  if (match === null) return undefined;
  const [, year, month, day] = match as unknown as [string, string, string, string];
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  // Reject names like _p20261345 that Date.UTC would roll over into another day.
  return partitionName(table, date) === name ? date : undefined;
}

/**
 * What partition maintenance should do at `now`: have a partition for every UTC day from the
 * retention cutoff to `daysAhead` days after today, and drop partitions that end at or before
 * the cutoff (`now - retentionDays`).
 */
export function planPartitions(options: {
  table: PartitionedTable;
  now: Date;
  daysAhead: number;
  retentionDays: number;
  existing: readonly string[];
}): PartitionPlan {
  const { table, now, daysAhead, retentionDays } = options;
  if (!Number.isInteger(daysAhead) || daysAhead < 0) {
    throw new RangeError(`daysAhead must be a non-negative integer, got ${daysAhead}`);
  }
  if (!Number.isInteger(retentionDays) || retentionDays < 1) {
    throw new RangeError(`retentionDays must be a positive integer, got ${retentionDays}`);
  }
  const cutoff = new Date(now.getTime() - retentionDays * dayMs);
  const existingDays = new Map<string, Date>();
  for (const name of options.existing) {
    const day = parsePartitionDay(table, name);
    if (day !== undefined) existingDays.set(name, day);
  }

  const drop = [...existingDays]
    .filter(([, day]) => day.getTime() + dayMs <= cutoff.getTime())
    .map(([name]) => name)
    .sort();

  const create: DailyPartition[] = [];
  const last = startOfUtcDay(now).getTime() + daysAhead * dayMs;
  for (let day = startOfUtcDay(cutoff).getTime(); day <= last; day += dayMs) {
    const partition = dailyPartition(table, new Date(day));
    if (partition.to.getTime() <= cutoff.getTime()) continue;
    if (!existingDays.has(partition.name)) create.push(partition);
  }
  return { create, drop, cutoff };
}

function startOfUtcDay(date: Date): Date {
  return new Date(Math.floor(date.getTime() / dayMs) * dayMs);
}
