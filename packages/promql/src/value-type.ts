/** The types of PromQL expressions, as Prometheus documents them. */
export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';
