import type { ValueType } from './value-type.js';

/** A PromQL function's signature, as Prometheus 2.42's parser declares it. */
export type FunctionDefinition = {
  name: string;
  argTypes: ValueType[];
  /** 0: exactly argTypes; n > 0: up to n more of the last type may be left out; -1: any more. */
  variadic: number;
  returnType: ValueType;
};

const v: ValueType = 'vector';
const m: ValueType = 'matrix';
const s: ValueType = 'scalar';
const str: ValueType = 'string';

const table: [string, ValueType[], number, ValueType][] = [
  ['abs', [v], 0, v],
  ['absent', [v], 0, v],
  ['absent_over_time', [m], 0, v],
  ['acos', [v], 0, v],
  ['acosh', [v], 0, v],
  ['asin', [v], 0, v],
  ['asinh', [v], 0, v],
  ['atan', [v], 0, v],
  ['atanh', [v], 0, v],
  ['avg_over_time', [m], 0, v],
  ['ceil', [v], 0, v],
  ['changes', [m], 0, v],
  ['clamp', [v, s, s], 0, v],
  ['clamp_max', [v, s], 0, v],
  ['clamp_min', [v, s], 0, v],
  ['cos', [v], 0, v],
  ['cosh', [v], 0, v],
  ['count_over_time', [m], 0, v],
  ['days_in_month', [v], 1, v],
  ['day_of_month', [v], 1, v],
  ['day_of_week', [v], 1, v],
  ['day_of_year', [v], 1, v],
  ['deg', [v], 0, v],
  ['delta', [m], 0, v],
  ['deriv', [m], 0, v],
  ['exp', [v], 0, v],
  ['floor', [v], 0, v],
  ['histogram_count', [v], 0, v],
  ['histogram_sum', [v], 0, v],
  ['histogram_fraction', [s, s, v], 0, v],
  ['histogram_quantile', [s, v], 0, v],
  ['holt_winters', [m, s, s], 0, v],
  ['hour', [v], 1, v],
  ['idelta', [m], 0, v],
  ['increase', [m], 0, v],
  ['irate', [m], 0, v],
  ['label_replace', [v, str, str, str, str], 0, v],
  ['label_join', [v, str, str, str], -1, v],
  ['last_over_time', [m], 0, v],
  ['ln', [v], 0, v],
  ['log10', [v], 0, v],
  ['log2', [v], 0, v],
  ['max_over_time', [m], 0, v],
  ['min_over_time', [m], 0, v],
  ['minute', [v], 1, v],
  ['month', [v], 1, v],
  ['pi', [], 0, s],
  ['predict_linear', [m, s], 0, v],
  ['present_over_time', [m], 0, v],
  ['quantile_over_time', [s, m], 0, v],
  ['rad', [v], 0, v],
  ['rate', [m], 0, v],
  ['resets', [m], 0, v],
  ['round', [v, s], 1, v],
  ['scalar', [v], 0, s],
  ['sgn', [v], 0, v],
  ['sin', [v], 0, v],
  ['sinh', [v], 0, v],
  ['sort', [v], 0, v],
  ['sort_desc', [v], 0, v],
  ['sqrt', [v], 0, v],
  ['stddev_over_time', [m], 0, v],
  ['stdvar_over_time', [m], 0, v],
  ['sum_over_time', [m], 0, v],
  ['tan', [v], 0, v],
  ['tanh', [v], 0, v],
  ['time', [], 0, s],
  ['timestamp', [v], 0, v],
  ['vector', [s], 0, v],
  ['year', [v], 1, v],
];

/** Every function of Prometheus 2.42, by name. */
export const functionDefinitions: ReadonlyMap<string, FunctionDefinition> = new Map(
  table.map(([name, argTypes, variadic, returnType]) => [
    name,
    { name, argTypes, variadic, returnType },
  ]),
);

/**
 * Functions whose result changes with the evaluation time even when their arguments do not:
 * never treated as step-invariant (Prometheus' `AtModifierUnsafeFunctions`).
 */
export const atModifierUnsafeFunctions: ReadonlySet<string> = new Set([
  'days_in_month',
  'day_of_month',
  'day_of_week',
  'day_of_year',
  'hour',
  'minute',
  'month',
  'year',
  'predict_linear',
  'time',
  'timestamp',
]);
