import { badData } from './promql-error.js';
import { compileRe2Regexp } from './re2-regexp.js';

export type MatchType = '=' | '!=' | '=~' | '!~';

/** One label matcher of a selector. A missing label matches as the empty string. */
export type LabelMatcher = {
  readonly name: string;
  readonly type: MatchType;
  readonly value: string;
  matches(value: string): boolean;
};

/** A matcher; regular expressions are anchored at both ends and use RE2 syntax as in Go. */
export function createLabelMatcher(name: string, type: MatchType, value: string): LabelMatcher {
  switch (type) {
    case '=':
      return { name, type, value, matches: (v) => v === value };
    case '!=':
      return { name, type, value, matches: (v) => v !== value };
    case '=~':
    case '!~': {
      let pattern: RegExp;
      try {
        pattern = compileRe2Regexp(value);
      } catch (err) {
        throw badData(`invalid regular expression ${JSON.stringify(value)}: ${String(err)}`);
      }
      return type === '=~'
        ? { name, type, value, matches: (v) => pattern.test(v) }
        : { name, type, value, matches: (v) => !pattern.test(v) };
    }
  }
}
