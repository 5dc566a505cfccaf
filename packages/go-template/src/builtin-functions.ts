import type { GoFunction } from './go-function.js';
import { escapeHtml, escapeJs, goQueryEscape } from './go-escapes.js';
import { goSprintf } from './go-sprintf.js';
import type { GoValue } from './go-values.js';
import { formatGoValue, goTypeName, GoHtml, GoMap, isTrue } from './go-values.js';

/** Names of the functions Go's text/template always has. */
export const builtinFunctionNames = [
  'and',
  'or',
  'not',
  'len',
  'index',
  'slice',
  'print',
  'printf',
  'println',
  'html',
  'js',
  'urlquery',
  'eq',
  'ne',
  'lt',
  'le',
  'gt',
  'ge',
  'call',
] as const;

/** The functions every Go template has, but and/or, which the executor evaluates lazily. */
export function builtinFunctions(): Map<string, GoFunction> {
  const fns = new Map<string, GoFunction>();
  // Go 1.19 derives the orderings from lt and eq: le = lt || eq, gt = !le, ge = !lt, so with
  // a NaN `gt` and `ge` are true.
  const lt = (a: GoValue, b: GoValue): boolean => compareBasic(a, b, false) < 0;
  const eq = (a: GoValue, b: GoValue): boolean => compareBasic(a, b, true) === 0;
  const le = (a: GoValue, b: GoValue): boolean => lt(a, b) || eq(a, b);
  const ordering = (test: (a: GoValue, b: GoValue) => boolean): GoFunction => ({
    params: ['any', 'any'],
    call: ([a, b]) => test(a!, b!),
  });
  fns.set('eq', {
    params: ['any'],
    variadic: 'any',
    call([first, ...others]) {
      if (others.length === 0) throw new Error('missing argument for comparison');
      return others.some((other) => eq(first!, other));
    },
  });
  fns.set(
    'ne',
    ordering((a, b) => !eq(a, b)),
  );
  fns.set('lt', ordering(lt));
  fns.set('le', ordering(le));
  fns.set(
    'gt',
    ordering((a, b) => !le(a, b)),
  );
  fns.set(
    'ge',
    ordering((a, b) => !lt(a, b)),
  );
  fns.set('not', { params: ['any'], call: ([v]) => !isTrue(v!) });
  fns.set('len', {
    params: ['any'],
    call([v]) {
      if (typeof v === 'string') return BigInt(Buffer.byteLength(v));
      if (Array.isArray(v)) return BigInt(v.length);
      if (v instanceof GoMap) return BigInt(v.entries.size);
      throw new Error(`len of type ${goTypeName(v!)}`);
    },
  });
  fns.set('index', {
    params: ['any'],
    variadic: 'any',
    call([item, ...keys]) {
      let current: GoValue = item!;
      for (const key of keys) {
        if (current instanceof GoMap) {
          if (typeof key !== 'string') throw new Error('value has type int; should be string');
          current = current.entries.get(key) ?? current.zero;
        } else if (Array.isArray(current) || typeof current === 'string') {
          if (typeof key !== 'bigint') throw new Error('cannot index slice/array with type string');
          const list = current as readonly GoValue[] | string;
          if (key < 0n || key >= BigInt(list.length)) {
            throw new Error(`index out of range: ${key}`);
          }
          current =
            typeof list === 'string' ? BigInt(Buffer.from(list)[Number(key)]!) : list[Number(key)]!;
        } else {
          throw new Error(`can't index item of type ${goTypeName(current)}`);
        }
      }
      return current;
    },
  });
  fns.set('slice', {
    params: ['any'],
    variadic: 'int',
    call([item, ...bounds]) {
      if (typeof item !== 'string' && !Array.isArray(item)) {
        throw new Error(`can't slice item of type ${goTypeName(item!)}`);
      }
      const list = item as string | readonly GoValue[];
      const [from = 0n, to = BigInt(list.length)] = bounds as bigint[];
      if (from < 0n || to > BigInt(list.length) || from > to) {
        throw new Error(`index out of range: ${from}`);
      }
      return typeof list === 'string'
        ? Buffer.from(list).subarray(Number(from), Number(to)).toString()
        : list.slice(Number(from), Number(to));
    },
  });
  fns.set('print', { params: [], variadic: 'any', call: (args) => goSprint(args) });
  fns.set('println', {
    params: [],
    variadic: 'any',
    call: (args) => `${args.map(formatGoValue).join(' ')}\n`,
  });
  fns.set('printf', {
    params: ['string'],
    variadic: 'any',
    call: ([format, ...args]) => goSprintf(format as string, args),
  });
  fns.set('html', { params: [], variadic: 'any', call: (args) => escapeHtml(evalArgsText(args)) });
  fns.set('js', { params: [], variadic: 'any', call: (args) => escapeJs(evalArgsText(args)) });
  fns.set('urlquery', {
    params: [],
    variadic: 'any',
    call: (args) => goQueryEscape(evalArgsText(args)),
  });
  fns.set('call', {
    params: ['any'],
    variadic: 'any',
    call() {
      throw new Error('call of a non-function');
    },
  });
  return fns;
}

/** fmt.Sprint: a space between operands when neither is a string. */
function goSprint(args: readonly GoValue[]): string {
  let out = '';
  args.forEach((arg, i) => {
    if (i > 0 && typeof arg !== 'string' && typeof args[i - 1] !== 'string') out += ' ';
    out += formatGoValue(arg);
  });
  return out;
}

function evalArgsText(args: readonly GoValue[]): string {
  return args.length === 1 && typeof args[0] === 'string' ? args[0] : goSprint(args);
}

/** Go 1.19's eq/lt on basic kinds: an int and a float do not compare. */
function compareBasic(a: GoValue, b: GoValue, equality: boolean): number {
  const kind = (v: GoValue): string =>
    v instanceof GoHtml
      ? 'string'
      : v === null
        ? 'nil'
        : typeof v === 'object'
          ? 'other'
          : typeof v;
  const ka = kind(a);
  const kb = kind(b);
  if (ka !== kb) {
    if (equality && (ka === 'nil' || kb === 'nil')) return 1;
    throw new Error('incompatible types for comparison');
  }
  if (ka === 'other' || ka === 'nil') {
    if (equality) throw new Error(`non-comparable types`);
    throw new Error('invalid type for comparison');
  }
  if (ka === 'boolean') {
    if (!equality) throw new Error('invalid type for comparison');
    return a === b ? 0 : 1;
  }
  const x = a instanceof GoHtml ? a.value : (a as string | number | bigint);
  const y = b instanceof GoHtml ? b.value : (b as string | number | bigint);
  if (x === y) return 0;
  if (ka === 'number' && (Number.isNaN(x) || Number.isNaN(y))) return NaN;
  return x < y ? -1 : 1;
}
