import type { PositionedSample } from '@monitor/schemas';

/**
 * A decoded host sample as the writer stores it: no metrics, tags, containers or processes
 * unless given. Tests name what they test (`metrics`, `tags`, `position`…) and nothing else.
 */
export function buildHostSample(
  fields: Pick<PositionedSample, 'orgId' | 'host' | 'timeMs'> & Partial<PositionedSample>,
): PositionedSample {
  return { metrics: {}, tags: {}, containers: [], processes: [], ...fields };
}
