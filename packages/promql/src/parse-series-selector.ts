import type { LabelMatcher } from './label-matcher.js';
import { parsePromql } from './parse-promql.js';
import { badData } from './promql-error.js';

/** A `match[]` parameter: one instant vector selector, as Prometheus' parser.ParseMetricSelector. */
export function parseSeriesSelector(text: string): LabelMatcher[] {
  let expr;
  try {
    expr = parsePromql(text);
  } catch (err) {
    throw badData(`invalid parameter "match[]": ${(err as Error).message}`);
  }
  if (
    expr.kind !== 'vector' ||
    expr.originalOffsetMs !== 0 ||
    expr.atMs !== null ||
    expr.startOrEnd !== null
  ) {
    throw badData(`invalid parameter "match[]": ${JSON.stringify(text)} is not a series selector`);
  }
  return expr.matchers;
}
