import { parseArgs } from 'node:util';

/**
 * The command line of a benchmark: every option of `defaults` takes a value; `--out FILE` names
 * the results file and `--help` prints `usage` and exits. Throws on an unknown option.
 */
export function parseCommandLine<K extends string>(
  defaults: Record<K, string>,
  usage: string,
): { values: Record<K, string>; out: string | undefined } {
  const stringOptions: Record<string, { type: 'string'; default: string }> = {};
  for (const [name, value] of Object.entries<string>(defaults))
    stringOptions[name] = { type: 'string', default: value };
  const { values } = parseArgs({
    options: {
      ...stringOptions,
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${usage}\n`);
    process.exit(0);
  }
  return { values: values as Record<K, string>, out: values.out };
}

/** Parses a command-line integer in `[min, max]`, naming the option when it is not one. */
export function integerOption(
  name: string,
  value: string,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}
