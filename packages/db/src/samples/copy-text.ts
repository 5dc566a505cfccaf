/** Characters that COPY's text format gives a meaning: escape, column and row separators. */
const special = /[\\\t\n\r]/;
const specialGlobal = /[\\\t\n\r]/g;
const replacements: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
};

/**
 * A text value as one field of COPY's text format (tab-separated, backslash escapes). Values
 * without special characters, the common case, are returned as they are. JSON made by
 * JSON.stringify has no raw control characters, so for JSON this only doubles backslashes.
 */
export function copyTextField(value: string): string {
  return special.test(value) ? value.replace(specialGlobal, (c) => replacements[c] ?? c) : value;
}
