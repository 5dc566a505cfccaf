import type { SourceTiers } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { requireStorageSettings } from '../schema/storage-settings.js';
import { readFilledRanges } from '../storage/kept-tiers.js';
import type { StoragePolicies } from '../storage/storage-mode.js';

const dayMs = 86_400_000;

type FilledRange = Awaited<ReturnType<typeof readFilledRanges>>[number];

/**
 * What `max_source_resolution=auto` reads at `nowMs`: raw samples from the raw retention's edge
 * on, and each tier over the buckets it stored that its retention still keeps. (Buckets it has
 * not stored yet are computed from the raw samples, which are kept there.)
 */
function sourceTiersOf(
  policies: StoragePolicies,
  filled: readonly FilledRange[],
  nowMs: number,
): SourceTiers {
  return {
    rawFromMs: nowMs - policies.rawRetentionDays * dayMs,
    tiers: filled.map(({ tier, fromMs }) => ({
      widthMs: tier.widthMs,
      fromMs: Math.max(fromMs, nowMs - tier.retentionDays(policies) * dayMs),
    })),
  };
}

/**
 * What `max_source_resolution=auto` reads (sourceTiersOf), read from the database again at most
 * every `refreshMs`; undefined (raw samples only) until it could be read once. `shards`: the
 * databases holding samples (the sample shards, the same storage settings, or the one
 * database); a tier is read where every shard has filled it.
 */
export function createSourceTiersReader(
  shards: readonly Database[],
  options: { refreshMs: number; nowMs: () => number },
): () => Promise<SourceTiers | undefined> {
  let read: { policies: StoragePolicies; filled: FilledRange[]; atMs: number } | undefined;
  return async () => {
    const nowMs = options.nowMs();
    if (read === undefined || nowMs - read.atMs >= options.refreshMs) {
      try {
        const [{ policies }, ...filled] = await Promise.all([
          requireStorageSettings(shards[0] as Database),
          ...shards.map((shard) => readFilledRanges(shard.sql)),
        ]);
        read = { policies, filled: filledEverywhere(filled), atMs: nowMs };
      } catch {
        // Not migrated yet, or the database away: the query itself says what is wrong.
        if (read === undefined) return undefined;
      }
    }
    return sourceTiersOf(read.policies, read.filled, nowMs);
  };
}

/** The tiers every shard has filled, each from where the last of them starts. */
function filledEverywhere(shards: readonly (readonly FilledRange[])[]): FilledRange[] {
  const [first = [], ...others] = shards;
  return first.flatMap((range) => {
    const starts = others.map(
      (other) => other.find((each) => each.tier.name === range.tier.name)?.fromMs,
    );
    if (starts.some((start) => start === undefined)) return [];
    return [{ ...range, fromMs: Math.max(range.fromMs, ...(starts as number[])) }];
  });
}
