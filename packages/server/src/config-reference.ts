import type { z } from 'zod';
import { commandConfigSchemas } from './config.js';

type CommandName = keyof typeof commandConfigSchemas;

/** How the table names each schema's readers, in this order. */
const readerNames: Readonly<Record<CommandName, string>> = {
  gateway: 'gateway',
  writer: 'writer',
  evaluator: 'evaluator',
  api: 'api',
  notifier: 'notifier',
  investigator: 'investigator',
  all: '`all`',
  commands: 'commands',
};

/**
 * Variables read outside the zod schemas: by the image's entry point before Node starts, or
 * where the embedded PostgreSQL is looked for. The reference test holds every `process.env`
 * read of the roles' sources to this list or the schemas.
 */
const unschemaedVariables: readonly ConfigVariable[] = [
  {
    name: 'MONITOR_NODE',
    readBy: ['image entry point'],
    requiredBy: [],
    defaultValue: '`node`',
    description: 'The Node binary `packages/server/bin/monitor.sh` runs the role with.',
  },
  {
    name: 'MONITOR_NODE_FLAGS',
    readBy: ['image entry point'],
    requiredBy: [],
    defaultValue: 'none',
    description:
      'More Node flags for the role, e.g. `--cpu-prof` or `--heap-growing-percent=100` (NODE_OPTIONS does not take every flag).',
  },
  {
    name: 'PG_BIN',
    readBy: ['`all`', 'commands'],
    requiredBy: [],
    defaultValue: '`/usr/lib/postgresql/<newest>/bin`, else `pg_config --bindir`',
    description:
      'The directory of the PostgreSQL (≥ 15) server binaries the embedded database runs (`postgres`, `initdb`).',
  },
];

export interface ConfigVariable {
  readonly name: string;
  readonly readBy: readonly string[];
  readonly requiredBy: readonly string[];
  /** As the table shows it: a code span, `none`, or prose. */
  readonly defaultValue: string;
  readonly description: string;
}

/** The description of a field, looked for through `.optional()` and `.default()` wrappers. */
function descriptionOf(schema: z.ZodType): string | undefined {
  let current: z.ZodType | undefined = schema;
  while (current !== undefined) {
    if (current.description !== undefined) return current.description;
    const def = current._zod.def as { innerType?: z.ZodType };
    current = def.innerType;
  }
  return undefined;
}

function formatDefault(schema: z.ZodType): string {
  const parsed = schema.safeParse(undefined);
  if (!parsed.success || parsed.data === undefined) return 'none';
  const value: unknown = parsed.data;
  if (Array.isArray(value)) return value.length === 0 ? 'none' : `\`${value.join(',')}\``;
  return `\`${String(value)}\``;
}

/**
 * Every variable of every command's schema, in alphabetical order: who reads it, who cannot
 * start without it, its default and its description. Throws naming a field without a
 * description, so a new setting cannot reach the reference undocumented.
 */
export function collectConfigVariables(): ConfigVariable[] {
  const found = new Map<
    string,
    { readBy: string[]; requiredBy: string[]; defaults: Set<string>; description: string }
  >();
  for (const [command, schema] of Object.entries(commandConfigSchemas) as [
    CommandName,
    (typeof commandConfigSchemas)[CommandName],
  ][]) {
    for (const [name, field] of Object.entries(schema.shape) as [string, z.ZodType][]) {
      const description = descriptionOf(field);
      if (description === undefined) {
        throw new Error(`${name} (${command}) has no .describe(): say what it means`);
      }
      const entry = found.get(name) ?? {
        readBy: [],
        requiredBy: [],
        defaults: new Set<string>(),
        description,
      };
      entry.readBy.push(readerNames[command]);
      const required = !field.safeParse(undefined).success;
      if (required) entry.requiredBy.push(readerNames[command]);
      else entry.defaults.add(formatDefault(field));
      found.set(name, entry);
    }
  }
  const variables: ConfigVariable[] = [...found].map(([name, entry]) => ({
    name,
    readBy: entry.readBy,
    requiredBy: entry.requiredBy,
    // A variable required somewhere and optional elsewhere (DATABASE_URL) says so in its text.
    defaultValue: [...entry.defaults].join(' / ') || 'none',
    description: entry.description,
  }));
  return [...variables, ...unschemaedVariables].sort((a, b) => a.name.localeCompare(b.name));
}

const allCommands = Object.values(readerNames);
const allRoles = allCommands.filter((name) => name !== 'commands');

function formatReaders(names: readonly string[]): string {
  if (names.length === allCommands.length) return 'every role, commands';
  if (names.length === allRoles.length && !names.includes('commands')) return 'every role';
  return names.join(', ');
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}

/** docs/configuration.md, as `monitor config-reference` prints it. */
export function renderConfigurationReference(): string {
  const rows = collectConfigVariables().map((variable) =>
    [
      `\`${variable.name}\``,
      formatReaders(variable.readBy),
      variable.requiredBy.length === 0 ? '' : formatReaders(variable.requiredBy),
      variable.defaultValue,
      variable.description,
    ]
      .map(cell)
      .join(' | '),
  );
  return [
    '# Configuration',
    '',
    '<!-- Generated by `npm run -s monitor -- config-reference > docs/configuration.md` from the',
    '     zod schemas of packages/server/src/config.ts; config-reference.test.ts fails when it is stale. -->',
    '',
    'Every role reads its settings from the environment once, at start, and validates them before',
    'it opens a socket or a connection: a missing or bad variable stops it with exit code 1 and a',
    'message naming every such variable, never its value. A role reads only the variables it uses;',
    'an empty variable counts as unset. "Commands" are `migrate`, `orgs`, `keys`, `rules` and',
    '`storage`; "`all`" is every role in one process (`npm start`).',
    '',
    '| variable | read by | required by | default | meaning |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
    '',
  ].join('\n');
}
