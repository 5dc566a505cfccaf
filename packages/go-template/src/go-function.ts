import type { GoValue } from './go-values.js';

/** The type of a function parameter: how an argument is checked and a literal converted. */
export type ParamType = 'string' | 'float64' | 'int' | 'bool' | 'any';

/** A template function: its parameters (and variadic tail) and what it does. */
export type GoFunction = {
  params: readonly ParamType[];
  variadic?: ParamType;
  /** Throws an Error whose message Go would return as the function's error. */
  call(args: GoValue[]): GoValue | Promise<GoValue>;
};
