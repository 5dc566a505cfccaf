import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { collectConfigVariables, renderConfigurationReference } from './config-reference.js';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const referencePath = join(repoRoot, 'docs', 'configuration.md');

/** The sources that ship in a role: every package but the test and benchmark ones. */
function roleSources(): string[] {
  const skipPackages = new Set(['bench', 'testkit', 'testcontainers', 'console']);
  const files: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'testing' && entry.name !== 'node_modules') walk(path);
      } else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
        files.push(path);
      }
    }
  };
  for (const pkg of readdirSync(join(repoRoot, 'packages'))) {
    if (!skipPackages.has(pkg)) walk(join(repoRoot, 'packages', pkg, 'src'));
  }
  return files;
}

describe('the configuration reference', () => {
  it('is docs/configuration.md as the schemas give it', () => {
    // Stale? Regenerate: npm run -s monitor -- config-reference > docs/configuration.md
    expect(readFileSync(referencePath, 'utf8')).toBe(renderConfigurationReference());
  });

  it('lists every variable the roles read from process.env outside the schemas', () => {
    const listed = new Set(collectConfigVariables().map((variable) => variable.name));
    const unlisted: string[] = [];
    for (const file of roleSources()) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(
        /process\.env(?:\.([A-Z_][A-Z0-9_]*)|\['([A-Z_][A-Z0-9_]*)'\])/g,
      )) {
        const name = match[1] ?? match[2] ?? '';
        if (!listed.has(name)) unlisted.push(`${name} (${relative(repoRoot, file)})`);
      }
    }
    const entrypoint = readFileSync(join(repoRoot, 'packages/server/bin/monitor.sh'), 'utf8');
    for (const match of entrypoint.matchAll(/\$\{([A-Z_][A-Z0-9_]*)/g)) {
      const name = match[1] ?? '';
      if (!listed.has(name)) unlisted.push(`${name} (packages/server/bin/monitor.sh)`);
    }
    expect(unlisted).toEqual([]);
  });

  it('describes every variable, with the roles that read it', () => {
    for (const variable of collectConfigVariables()) {
      expect(variable.description, variable.name).not.toBe('');
      expect(variable.readBy.length, variable.name).toBeGreaterThan(0);
    }
  });
});
