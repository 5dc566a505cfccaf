import type { Database } from '@monitor/db';
import { compressOlderChunks, consolidateSampleChunks } from '@monitor/db/bench';
import { defaultStoragePolicies, headCompressLagMs } from '@monitor/db';
import { logProgress } from './harness/progress.js';

// What the PromQL benches share: asking a range query over HTTP, comparing two answers, and
// leaving the raw chunks as the shipped jobs would have by a given time.

/** Whether two answers are the same: series, times, values within 1e-9 relative. */
export type AnswerCheck = { series: number; points: number; differences: string[] };

export type QueryAnswer = {
  status: string;
  data?: {
    resultType: string;
    result: { metric: Record<string, string>; values: [number, string][] }[];
  };
  error?: string;
};

/**
 * Asks a query (`/query_range`, or `/query` for an instant one) with a form body; an instant
 * vector's `value` comes back as a one-point `values`, so that answers compare alike.
 */
export async function rangeQuery(
  url: string,
  headers: Record<string, string>,
  params: Record<string, string>,
): Promise<QueryAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
  const answer = (await response.json()) as QueryAnswer;
  if (answer.status !== 'success') {
    throw new Error(`${url} answered ${response.status}: ${JSON.stringify(answer).slice(0, 300)}`);
  }
  for (const series of answer.data?.result ?? []) {
    const instant = series as { value?: [number, string]; values?: [number, string][] };
    if (instant.values === undefined && instant.value !== undefined) {
      instant.values = [instant.value];
    }
  }
  return answer;
}

/** What differs between two matrices (at most 20 lines). */
export function compareAnswers(want: QueryAnswer, got: QueryAnswer): AnswerCheck {
  const key = (m: Record<string, string>) => JSON.stringify(Object.entries(m).sort());
  const index = (a: QueryAnswer) => new Map((a.data?.result ?? []).map((s) => [key(s.metric), s]));
  const w = index(want);
  const g = index(got);
  const differences: string[] = [];
  let points = 0;
  for (const k of new Set([...w.keys(), ...g.keys()])) {
    const a = w.get(k);
    const b = g.get(k);
    if (a === undefined || b === undefined) {
      differences.push(`${k} only in ${a === undefined ? 'ours' : 'prometheus'}`);
      continue;
    }
    if (a.values.length !== b.values.length) {
      differences.push(`${k}: ${a.values.length} points against ${b.values.length}`);
      continue;
    }
    a.values.forEach(([t, v], i) => {
      points++;
      const [gt, gv] = b.values[i]!;
      const x = Number(v);
      const y = Number(gv);
      if (t !== gt || Math.abs(x - y) > 1e-9 * Math.max(Math.abs(x), Math.abs(y))) {
        differences.push(`${k} @${t}: prometheus ${v}, ours ${gt} ${gv}`);
      }
    });
  }
  return { series: w.size, points, differences: differences.slice(0, 20) };
}

/** How often consolidate_sample_chunks runs as shipped (storage/timescale/policies.ts). */
const consolidationStepMs = 30 * 60_000;

/**
 * What the policies' jobs would have done to a history starting at `startMs` by `nowMs`, their
 * jobs paused: head chunks compressed a minute after they ended and merged, and the growing
 * compressed chunks consolidated as consolidate_sample_chunks does
 * (storage/timescale/head-chunks.ts), every half hour over the history in the jobs' order.
 */
export async function compressAsThePoliciesWould(
  db: Database,
  startMs: number,
  nowMs: number,
): Promise<void> {
  const compressBefore = new Date(
    nowMs - Math.max(defaultStoragePolicies.compressAfterHours * 3_600_000, headCompressLagMs),
  );
  logProgress(`compressing the raw chunks that ended before ${compressBefore.toISOString()}`);
  for (let cutMs = startMs + consolidationStepMs; ; cutMs += consolidationStepMs) {
    await compressOlderChunks(db, 'samples', new Date(Math.min(cutMs, compressBefore.getTime())));
    await consolidateSampleChunks(db);
    if (cutMs >= compressBefore.getTime()) break;
  }
}
