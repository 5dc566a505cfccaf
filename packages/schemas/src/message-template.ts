/**
 * A rule's `message_template`: text with `{{name}}` placeholders (docs/api.md#rule-options).
 * The API parses it at save (an unknown placeholder is a 422) and the notifier renders
 * it, both through `parseMessageTemplate`, so what is accepted is exactly what renders.
 */

/** The placeholders besides `{{tags.<key>}}`. */
export const messageTemplatePlaceholders = [
  'rule_name',
  'host',
  'metric',
  'value',
  'threshold',
  'severity',
  'status',
  'started_at',
] as const;
type MessageTemplatePlaceholder = (typeof messageTemplatePlaceholders)[number];

/** `{{tags.<key>}}`: a tag of the alert's service; the key as a tag key may be. */
const tagsPrefix = 'tags.';
const maxTagKeyLength = 64;

/** A piece of a parsed template: literal text, a placeholder, or a tag of the service. */
export type MessageTemplatePart =
  | { kind: 'text'; text: string }
  | { kind: 'placeholder'; name: MessageTemplatePlaceholder }
  | { kind: 'tag'; key: string };

export type MessageTemplateParseResult =
  { success: true; parts: MessageTemplatePart[] } | { success: false; message: string };

const known: ReadonlySet<string> = new Set(messageTemplatePlaceholders);

/**
 * The template's parts in order. `{{` opens a placeholder that `}}` closes; white space inside
 * the braces is allowed (`{{ host }}`). An unknown name, an empty or unclosed placeholder is a
 * failure whose message names it. Text outside placeholders is kept as is, `}}` included.
 */
export function parseMessageTemplate(template: string): MessageTemplateParseResult {
  const parts: MessageTemplatePart[] = [];
  let at = 0;
  while (at < template.length) {
    const open = template.indexOf('{{', at);
    if (open === -1) {
      parts.push({ kind: 'text', text: template.slice(at) });
      break;
    }
    if (open > at) parts.push({ kind: 'text', text: template.slice(at, open) });
    const close = template.indexOf('}}', open + 2);
    if (close === -1) {
      return { success: false, message: `has an unclosed placeholder at character ${open + 1}` };
    }
    const name = template.slice(open + 2, close).trim();
    if (known.has(name)) {
      parts.push({ kind: 'placeholder', name: name as MessageTemplatePlaceholder });
    } else if (
      name.startsWith(tagsPrefix) &&
      name.length > tagsPrefix.length &&
      name.length - tagsPrefix.length <= maxTagKeyLength &&
      !name.includes('{')
    ) {
      parts.push({ kind: 'tag', key: name.slice(tagsPrefix.length) });
    } else {
      return {
        success: false,
        message:
          `has an unknown placeholder {{${name}}}: use ` +
          `${messageTemplatePlaceholders.map((known) => `{{${known}}}`).join(', ')} or ` +
          `{{tags.<key>}}`,
      };
    }
    at = close + 2;
  }
  return { success: true, parts };
}

/** What the placeholders of one message stand for. */
export type MessageTemplateValues = Readonly<Record<MessageTemplatePlaceholder, string>> & {
  tags: Readonly<Record<string, string>>;
};

/**
 * The text of `parts` with each placeholder replaced by its value; a tag the service does not
 * have renders as the empty string.
 */
export function renderMessageTemplate(
  parts: readonly MessageTemplatePart[],
  values: MessageTemplateValues,
): string {
  return parts
    .map((part) => {
      switch (part.kind) {
        case 'text':
          return part.text;
        case 'placeholder':
          return values[part.name];
        case 'tag':
          return Object.hasOwn(values.tags, part.key) ? (values.tags[part.key] ?? '') : '';
      }
    })
    .join('');
}
