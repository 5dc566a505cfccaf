import type { GoValue } from './go-values.js';
import { formatGoFloat, formatGoValue, goTypeName, GoHtml } from './go-values.js';

type Spec = { flags: string; width: number | null; prec: number | null; verb: string };

/**
 * Go's fmt.Sprintf for the verbs templates use (`%s %v %d %f %e %g %q %x %X %t %c %%`, flags
 * `+- #0`, width and precision), with Go's `%!verb(type=value)` for a mismatch and
 * `%!verb(MISSING)` / `%!(EXTRA …)` for a wrong count.
 */
export function goSprintf(format: string, args: readonly GoValue[]): string {
  let out = '';
  let argIndex = 0;
  const pattern = /%([-+# 0]*)(\d+|\*)?(?:\.(\d*|\*))?(.|$)/gsy;
  let i = 0;
  while (i < format.length) {
    const percent = format.indexOf('%', i);
    if (percent === -1) {
      out += format.slice(i);
      break;
    }
    out += format.slice(i, percent);
    pattern.lastIndex = percent;
    const match = pattern.exec(format)!;
    i = pattern.lastIndex;
    const [, flags = '', widthText, precText, verb = ''] = match;
    if (verb === '') {
      out += '%!(NOVERB)';
      break;
    }
    if (verb === '%') {
      out += '%';
      continue;
    }
    const takeInt = (text: string | undefined): number | null => {
      if (text === undefined) return null;
      if (text !== '*') return text === '' ? 0 : Number(text);
      const arg = args[argIndex++];
      return typeof arg === 'bigint' ? Number(arg) : null;
    };
    const spec: Spec = { flags, width: takeInt(widthText), prec: takeInt(precText), verb };
    if (argIndex >= args.length) {
      out += `%!${verb}(MISSING)`;
      continue;
    }
    out += pad(formatOne(args[argIndex++]!, spec), spec);
  }
  if (argIndex < args.length) {
    const extra = args.slice(argIndex).map((a) => `${goTypeName(a)}=${formatGoValue(a)}`);
    out += `%!(EXTRA ${extra.join(', ')})`;
  }
  return out;
}

function pad(text: string, spec: Spec): string {
  if (spec.width === null || text.length >= spec.width) return text;
  if (spec.flags.includes('-')) return text.padEnd(spec.width);
  const numeric = 'dfFeEgGxXbo'.includes(spec.verb);
  if (spec.flags.includes('0') && numeric) {
    const sign = /^[+-]/.test(text) ? text[0]! : '';
    return sign + text.slice(sign.length).padStart(spec.width - sign.length, '0');
  }
  return text.padStart(spec.width);
}

function bad(value: GoValue, spec: Spec): string {
  return `%!${spec.verb}(${goTypeName(value)}=${formatGoValue(value)})`;
}

function withSign(text: string, spec: Spec): string {
  if (text.startsWith('-') || text.startsWith('+')) return text;
  if (spec.flags.includes('+')) return `+${text}`;
  if (spec.flags.includes(' ')) return ` ${text}`;
  return text;
}

function formatOne(value: GoValue, spec: Spec): string {
  const { verb, prec } = spec;
  if (typeof value === 'number') {
    switch (verb) {
      case 'v':
      case 'g':
      case 'G':
        return withSign(caseOf(formatGoFloat(value, 'g', prec ?? -1), verb), spec);
      case 'f':
      case 'F':
        return withSign(formatGoFloat(value, 'f', prec ?? 6), spec);
      case 'e':
      case 'E':
        return withSign(caseOf(formatGoFloat(value, 'e', prec ?? 6), verb), spec);
      default:
        return bad(value, spec);
    }
  }
  if (typeof value === 'bigint') {
    switch (verb) {
      case 'v':
      case 'd':
        return withSign(value.toString(), spec);
      case 'x':
        return value.toString(16);
      case 'X':
        return value.toString(16).toUpperCase();
      case 'o':
        return value.toString(8);
      case 'b':
        return value.toString(2);
      case 'c':
        return String.fromCodePoint(Number(value));
      case 'q':
        return `'${String.fromCodePoint(Number(value))}'`;
      default:
        return bad(value, spec);
    }
  }
  if (typeof value === 'string' || value instanceof GoHtml) {
    const text = typeof value === 'string' ? value : value.value;
    const cut = prec === null ? text : [...text].slice(0, prec).join('');
    switch (verb) {
      case 'v':
      case 's':
        return cut;
      case 'q':
        return JSON.stringify(cut);
      case 'x':
        return Buffer.from(cut).toString('hex');
      case 'X':
        return Buffer.from(cut).toString('hex').toUpperCase();
      default:
        return bad(value, spec);
    }
  }
  if (typeof value === 'boolean') {
    return verb === 'v' || verb === 't' ? String(value) : bad(value, spec);
  }
  if (verb === 'v' || verb === 's') {
    return value === null && verb === 's' ? '%!s(<nil>)' : formatGoValue(value);
  }
  return value === null ? `%!${verb}(<nil>)` : bad(value, spec);
}

function caseOf(text: string, verb: string): string {
  return verb === verb.toUpperCase()
    ? text.toUpperCase().replace('INF', 'Inf').replace('NAN', 'NaN')
    : text;
}
