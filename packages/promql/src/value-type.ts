/** The type of a PromQL expression's value. */
export type ValueType = 'scalar' | 'vector' | 'matrix' | 'string';
