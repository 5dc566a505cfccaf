// The package ships types, but its package.json `exports` do not point at them, so NodeNext
// resolution cannot find them: this repeats the one declaration used here.
declare module '@prometheus-io/lezer-promql' {
  import type { LRParser } from '@lezer/lr';

  export const parser: LRParser;
}
