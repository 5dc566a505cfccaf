/** Go's template.HTMLEscapeString. */
export function escapeHtml(text: string): string {
  return text.replace(/[<>&'"\0]/g, (c) =>
    c === '<'
      ? '&lt;'
      : c === '>'
        ? '&gt;'
        : c === '&'
          ? '&amp;'
          : c === "'"
            ? '&#39;'
            : c === '"'
              ? '&#34;'
              : '\uFFFD',
  );
}

/** Go's template.JSEscapeString. */
export function escapeJs(text: string): string {
  // eslint-disable-next-line no-control-regex -- Go's JSEscape escapes control characters too
  return text.replace(/[\\'"<>&=]|[\x00-\x1f]/g, (c) => {
    if (c === '\\') return '\\\\';
    if (c === "'") return "\\'";
    if (c === '"') return '\\"';
    return `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
  });
}

/** Go's url.QueryEscape: spaces as `+`, everything but unreserved characters %XX-escaped. */
export function goQueryEscape(text: string): string {
  return [...Buffer.from(text)]
    .map((byte) => {
      const c = String.fromCharCode(byte);
      if (/[A-Za-z0-9\-_.~]/.test(c)) return c;
      if (c === ' ') return '+';
      return `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    })
    .join('');
}
