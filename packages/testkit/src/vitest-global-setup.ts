import { readFile } from 'node:fs/promises';
import type { TestProject } from 'vitest/node';
import type { ServiceName } from './service.js';
import { serviceNames } from './service.js';
import { startServices } from './start-services.js';
import './vitest-context.js';

const declaration = /^\s*\/\/\s*@services\s+([a-z ,]+)$/m;

/**
 * Starts only the services that the selected integration test files declare in a
 * `// @services ...` comment, and provides their URLs to the tests. Named by vitest.config.ts.
 * @public
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  const { testFiles } = await project.globTestFiles(fileFilters(process.argv));
  const needed = new Set<ServiceName>();
  for (const file of testFiles) {
    for (const name of await declaredServices(file)) needed.add(name);
  }
  const started = await startServices([...needed], {
    log: (message, level) =>
      process.stderr.write(`[testkit] ${level === 'warn' ? 'WARN ' : ''}${message}\n`),
  });
  project.provide('serviceUrls', started.urls);
  return () => started.stop();
}

async function declaredServices(file: string): Promise<ServiceName[]> {
  const match = declaration.exec(await readFile(file, 'utf8'));
  if (!match?.[1]) return [];
  const names = match[1].split(/[\s,]+/).filter((name) => name !== '');
  const unknown = names.filter((name) => !(serviceNames as readonly string[]).includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `${file}: unknown service(s) ${unknown.join(', ')}; known: ${serviceNames.join(', ')}`,
    );
  }
  return names as ServiceName[];
}

/**
 * The file filters given on the vitest command line (vitest keeps them to itself). Without one,
 * every integration file counts, which at worst starts a service that no selected file needs.
 */
function fileFilters(argv: string[]): string[] {
  const args = argv.slice(2);
  const filters: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (arg.startsWith('-')) {
      if (!arg.includes('=') && optionsWithValue.has(arg)) i++;
      continue;
    }
    if (arg !== 'run' && arg !== 'vitest' && !arg.endsWith('vitest.mjs')) filters.push(arg);
  }
  return filters;
}

const optionsWithValue = new Set([
  '--project',
  '--config',
  '-c',
  '--reporter',
  '--root',
  '-r',
  '--dir',
  '--testNamePattern',
  '-t',
  '--shard',
  '--outputFile',
  '--pool',
]);
