type MergeableHypothesis = { kind: string; score: number; subject: string };

/**
 * A container and a process whose figures match (the process's within 60%..160% of the
 * container's) are one cause seen twice: the process runs in the container. The container stays,
 * naming the process, since it is what one limits, rolls back or moves. Each container, strongest
 * first, absorbs only the process that matches it best, so a second process at the same time
 * stays a cause of its own (a cron job beside a deploy).
 *
 * `ratio` gives the process's figure over the container's, or undefined when the two cannot be
 * the same cause (another resource, another start); `absorb` folds the process into the container.
 */
export function mergeProcessesIntoContainers<H extends MergeableHypothesis>(
  hypotheses: H[],
  ratio: (process: H, container: H) => number | undefined,
  absorb: (container: H, process: H) => void,
): H[] {
  const absorbed = new Set<H>();
  const containers = hypotheses
    .filter((h) => h.kind === 'container')
    .sort((a, b) => b.score - a.score || a.subject.localeCompare(b.subject));
  for (const container of containers) {
    let best: H | undefined;
    let bestDistance = Number.POSITIVE_INFINITY;
    for (const process of hypotheses) {
      if (process.kind !== 'process' || absorbed.has(process)) continue;
      const r = ratio(process, container);
      if (r === undefined || r < 0.6 || r > 1.6) continue;
      const distance = Math.abs(Math.log(r));
      if (distance < bestDistance) {
        best = process;
        bestDistance = distance;
      }
    }
    if (best === undefined) continue;
    absorbed.add(best);
    container.score = Math.max(container.score, best.score);
    absorb(container, best);
  }
  return hypotheses.filter((h) => !absorbed.has(h));
}
