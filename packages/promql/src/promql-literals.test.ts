import {
  builtinFunctionNames,
  builtinFunctions,
  executeGoTemplate,
  parseGoTemplate,
} from '@monitor/go-template';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unquotePromqlString } from './promql-literals.js';

/**
 * PromQL's strings are Go's string literals plus single quotes, as Prometheus reads them with
 * its own copy of strconv.Unquote (util/strutil). go-template keeps Go's own for templates (read here through a template, as its users do); the
 * two live on the same floor and cannot share code, so this keeps them saying the same.
 */
describe('unquotePromqlString', () => {
  const escape = fc.constantFrom(
    '\\a',
    '\\b',
    '\\f',
    '\\n',
    '\\r',
    '\\t',
    '\\v',
    '\\\\',
    '\\"',
    "\\'",
    '\\x41',
    '\\u00e9',
    '\\U0001F600',
    '\\101',
    '\\x4',
    '\\9',
  );
  // Bodies as a lexer hands them over: any characters but a newline (and, in a raw string, a
  // backquote, which ends it), escapes well and badly formed among them.
  const char = fc.constantFrom('a', 'é', '😀', ' ', '"', "'", '\\', '{', '}');
  const body = fc.array(fc.oneof(char, escape), { maxLength: 10 }).map((parts) => parts.join(''));
  /** Whether a lexer would end the literal inside `text`: a quote of its own kind, unescaped. */
  const endsEarly = (text: string, quote: string) => {
    for (let i = 0; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === quote) return true;
    }
    return false;
  };
  // A lexer never hands over such a body; a template would read its tail as template text.
  const bodyWithin = (quote: string) => body.filter((text) => !endsEarly(text, quote));
  const promql = (literal: string) => {
    try {
      return { value: unquotePromqlString(literal) };
    } catch {
      return 'refused';
    }
  };
  /** The literal as a Go template reads it: the string it prints, or refused at parse. */
  const goTemplate = async (literal: string) => {
    let template;
    try {
      template = parseGoTemplate('t', `{{${literal}}}`, new Set(builtinFunctionNames));
    } catch {
      return 'refused';
    }
    return { value: await executeGoTemplate('t', template, null, builtinFunctions()) };
  };

  it('reads double-quoted and raw literals as a Go template does', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('"', '`'), body, async (quote, raw) => {
        const text = quote === '`' ? raw.replaceAll('`', '') : raw;
        fc.pre(!endsEarly(text, quote));
        const literal = `${quote}${text}${quote}`;
        expect(promql(literal)).toEqual(await goTemplate(literal));
      }),
    );
  });

  it('reads a single-quoted literal as the double-quoted one with the quotes swapped', async () => {
    const swap = (s: string) => s.replace(/['"]/g, (q) => (q === '"' ? "'" : '"'));
    await fc.assert(
      fc.asyncProperty(bodyWithin("'"), async (text) => {
        const read = await goTemplate(`"${swap(text)}"`);
        expect(promql(`'${text}'`)).toEqual(
          read === 'refused' ? read : { value: swap(read.value) },
        );
      }),
    );
  });

  it('takes the escaped quote of its own kind only', () => {
    expect(unquotePromqlString("'it\\'s'")).toBe("it's");
    expect(() => unquotePromqlString('"it\\\'s"')).toThrow('invalid syntax');
    expect(unquotePromqlString('`a\\tb`')).toBe('a\\tb');
  });
});
