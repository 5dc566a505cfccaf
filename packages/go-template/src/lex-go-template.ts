import type { Scanner, Token } from './template-scanner.js';
import { closeDelim, createScanner, isSpace } from './template-scanner.js';
import { lexAction } from './lex-action.js';

/**
 * The tokens of Go's text/template (Go 1.19, what Prometheus 2.42 is built with), lexed as its
 * lex.go does: text, `{{`/`}}` with the `{{- ` / ` -}}` trim markers, comments, and inside
 * actions identifiers, keywords, fields, variables, literals and punctuation. A lexing error is
 * the last token, of type `error`, with Go's message. Every token of `text`, ending in `eof` or
 * `error`.
 */
export function lexGoTemplate(text: string): Token[] {
  const s = createScanner(text);
  if (lexText(s)) s.tokens.push({ type: 'eof', value: '', pos: s.pos, line: s.line });
  return s.tokens;
}

/** Text and the actions in it, up to the end of `text` (true) or an error (false). */
function lexText(s: Scanner): boolean {
  while (s.pos < s.text.length) {
    const open = s.text.indexOf('{{', s.pos);
    if (open === -1) {
      s.emit('text', s.pos, s.text.slice(s.pos));
      s.pos = s.text.length;
      break;
    }
    let textEnd = open;
    const trimLeft = s.text[open + 2] === '-' && isSpace(s.text[open + 3]);
    if (trimLeft) while (textEnd > s.pos && isSpace(s.text[textEnd - 1])) textEnd--;
    if (textEnd > s.pos) s.emit('text', s.pos, s.text.slice(s.pos, textEnd));
    // The trimmed space still counts for line numbers.
    for (const c of s.text.slice(textEnd, open)) if (c === '\n') s.line++;
    s.pos = open;
    s.emit('leftDelim', s.pos, '{{');
    s.pos += 2;
    if (trimLeft) s.pos += 2;
    // A comment is the whole action: `{{/* … */}}`.
    if (s.text.startsWith('/*', s.pos)) {
      const close = s.text.indexOf('*/', s.pos + 2);
      if (close === -1) return s.fail('unclosed comment');
      const comment = s.text.slice(s.pos, close + 2);
      s.emit('comment', s.pos, comment);
      s.pos = close + 2;
      const trimRight =
        s.text.startsWith(' -}}', s.pos) ||
        (isSpace(s.text[s.pos]) && s.text.startsWith('-}}', s.pos + 1));
      if (!s.text.startsWith('}}', s.pos) && !trimRight) {
        return s.fail('comment ends before closing delimiter');
      }
      if (trimRight) s.pos++;
      s.pos = closeDelim(s, trimRight);
      continue;
    }
    if (!lexAction(s)) return false;
  }
  return true;
}
