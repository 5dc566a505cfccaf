import { compareLabels } from '@monitor/promql';
import type { ExemplarReader } from './exemplar-reader.js';
import type { SeriesExemplars } from './group-exemplars.js';

/**
 * The exemplars of every sample shard's series (issue 59), answered as one database holding
 * them all would: each shard at once with the same limits, a series two shards hold (its
 * partition moving) merged with one exemplar per time, the first shard's standing, and the
 * limits applied to the whole (`maxSeries` to the series with exemplars: each shard checks its
 * own matches).
 */
export function createShardedExemplarReader(shards: readonly ExemplarReader[]): ExemplarReader {
  if (shards.length === 1) return shards[0] as ExemplarReader;
  return {
    async read(orgId, selectors, range, limits) {
      const answers = await Promise.all(
        shards.map((shard) => shard.read(orgId, selectors, range, limits)),
      );
      const bySeries = new Map<string, SeriesExemplars>();
      for (const answer of answers) {
        if ('overLimit' in answer) return answer;
        for (const series of answer.series) {
          const key = JSON.stringify(series.seriesLabels);
          const kept = bySeries.get(key);
          if (kept === undefined) {
            bySeries.set(key, { ...series, exemplars: [...series.exemplars] });
            continue;
          }
          const times = new Set(kept.exemplars.map((exemplar) => exemplar.timeMs));
          kept.exemplars.push(...series.exemplars.filter((each) => !times.has(each.timeMs)));
          kept.exemplars.sort((a, b) => a.timeMs - b.timeMs);
        }
      }
      const series = [...bySeries.values()];
      if (series.length > limits.maxSeries) return { overLimit: 'maxSeries' };
      const exemplars = series.reduce((sum, each) => sum + each.exemplars.length, 0);
      if (exemplars > limits.maxExemplars) return { overLimit: 'maxExemplars' };
      return { series: series.sort((a, b) => compareLabels(a.seriesLabels, b.seriesLabels)) };
    },
  };
}
