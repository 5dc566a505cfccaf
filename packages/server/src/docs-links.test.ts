import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
function slugOf(heading: string): string {
  const text = heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replaceAll('`', '')
    .replace(/\*\*|__/g, '');
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replaceAll(' ', '-');
}

/** The prose of a markdown file: fenced code blocks and inline code spans blanked out. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line;
  });
}

const anchorsByFile = new Map<string, Set<string>>();

function anchorsOf(file: string): Set<string> {
  const known = anchorsByFile.get(file);
  if (known !== undefined) return known;
  const anchors = new Set<string>();
  anchorsByFile.set(file, anchors);
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading === null) continue;
    const slug = slugOf(heading[1] ?? '');
    const count = seen.get(slug) ?? 0;
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
    seen.set(slug, count + 1);
  }
  return anchors;
}

/** Every file under `dir` whose name passes `keep`, build output and dependencies left out. */
function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      return ['node_modules', 'dist', '.turbo'].includes(entry.name) ? [] : filesUnder(path, keep);
    }
    return keep(entry.name) ? [path] : [];
  });
}

/** The README and every page under docs/, the benchmark notebooks in docs/benchmarks/ included. */
function markdownFiles(): string[] {
  return [
    join(repoRoot, 'README.md'),
    ...filesUnder(join(repoRoot, 'docs'), (name) => name.endsWith('.md')),
  ];
}

/** Source, scripts and deployment files, where comments cite the docs by path. */
function citingFiles(): string[] {
  const cites = (name: string) => /\.(ts|tsx|js|mjs|sh|json|ya?ml|conf)$/.test(name);
  const packages = join(repoRoot, 'packages');
  return [
    ...readdirSync(packages).flatMap((name) => [
      ...filesUnder(join(packages, name, 'src'), cites),
      ...filesUnder(join(packages, name, 'bin'), cites),
    ]),
    ...filesUnder(join(repoRoot, 'deploy'), cites),
    ...filesUnder(join(repoRoot, 'tools'), cites),
    ...filesUnder(join(repoRoot, '.ci'), () => true),
    ...markdownFiles(),
  ];
}

/** The headings of a markdown file as written, markup dropped. */
function headingsOf(file: string): string[] {
  return proseLines(readFileSync(file, 'utf8')).flatMap((line) => {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    return heading === null ? [] : [(heading[1] ?? '').replaceAll('`', '')];
  });
}

describe('the README and docs/', () => {
  it('link only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const file of markdownFiles()) {
      const lines = proseLines(readFileSync(file, 'utf8'));
      for (const line of lines) {
        const prose = line.replace(/`[^`]*`/g, '');
        for (const match of prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)) {
          const target = match[1] ?? '';
          if (/^[a-z]+:/i.test(target)) continue;
          const [path = '', anchor] = target.split('#');
          const resolved = path === '' ? file : resolve(dirname(file), path);
          const shown = `${relative(repoRoot, file)} → ${target}`;
          if (!existsSync(resolved)) {
            broken.push(`${shown} (no such file)`);
          } else if (anchor !== undefined && resolved.endsWith('.md')) {
            if (!anchorsOf(resolved).has(anchor)) broken.push(`${shown} (no such heading)`);
          }
        }
      }
    }
    expect(broken).toEqual([]);
  });
  it('are cited by path and section only where that file has that section', () => {
    // A comment's `docs/benchmarks/promql.md, "PromQL"` (the quote may follow a line break of
    // the comment) names a file under the repository and the start of one of its headings.
    const cite = /docs\/([\w./-]+\.md)(?:#([\w-]+))?(?:,(?:\s|\*|\/\/|#)*(["'])(.+?)\3)?/g;
    const broken: string[] = [];
    for (const file of citingFiles()) {
      const text = readFileSync(file, 'utf8');
      for (const match of text.matchAll(cite)) {
        const [, path = '', anchor, , section] = match;
        const target = join(repoRoot, 'docs', path);
        const shown = `${relative(repoRoot, file)} → ${match[0]}`;
        if (!existsSync(target)) {
          broken.push(`${shown} (no such file)`);
        } else if (anchor !== undefined && !anchorsOf(target).has(anchor)) {
          broken.push(`${shown} (no such heading)`);
        } else if (section !== undefined) {
          const starts = headingsOf(target).some((heading) => heading.startsWith(section));
          if (!starts) broken.push(`${shown} (no heading starts so)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
  it("show deploy/patroni/patroni.yml's bootstrap settings as the file has them", () => {
    const file = readFileSync(join(repoRoot, 'deploy', 'patroni', 'patroni.yml'), 'utf8');
    const settings = /^bootstrap:\n[\s\S]*?(?=^ {2}initdb:)/m.exec(file)?.[0];
    const page = readFileSync(join(repoRoot, 'docs', 'database-ha.md'), 'utf8');
    const blocks = [...page.matchAll(/^( *)```yaml\n([\s\S]*?)^\1```/gm)].map(
      ([, indent = '', body = '']) => body.replace(new RegExp(`^${indent}`, 'gm'), ''),
    );
    expect(settings).toBeDefined();
    expect(blocks).toContain(settings);
  });
  it('list every package in development.md, with what its source imports, on floors that ascend', () => {
    const page = readFileSync(join(repoRoot, 'docs', 'development.md'), 'utf8');
    const section = page.slice(page.indexOf('\n## Packages\n'), page.indexOf('\n## Tests'));
    const rows = new Map<string, { floor: number; uses: string[] }>();
    for (const [, floor = '', name = '', uses = ''] of section.matchAll(
      /^\| (\d) +\| `([\w-]+)` +\|.*\|([^|]*)\|$/gm,
    )) {
      const names = [...uses.matchAll(/`([\w-]+)`/g)].map(([, used = '']) => used);
      rows.set(name, { floor: Number(floor), uses: names });
    }
    const packages = join(repoRoot, 'packages');
    const importOf = /(?:from\s+|import\s*\(\s*|import\s+|resolve\(\s*)['"]@monitor\/([\w-]+)/g;
    const wrong: string[] = [];
    for (const name of readdirSync(packages)) {
      if (!existsSync(join(packages, name, 'package.json'))) continue;
      // What the package's own code imports: its tests and their helpers (src/testing/) aside.
      const sources = filesUnder(
        join(packages, name, 'src'),
        (file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file),
      ).filter((file) => !file.includes('/src/testing/'));
      const imported = new Set(
        sources.flatMap((file) =>
          [...readFileSync(file, 'utf8').matchAll(importOf)].map(([, used = '']) => used),
        ),
      );
      imported.delete(name);
      const row = rows.get(name);
      if (row === undefined) {
        wrong.push(`${name}: no row`);
        continue;
      }
      if ([...row.uses].sort().join() !== [...imported].sort().join()) {
        wrong.push(
          `${name}: the table says ${row.uses.join(', ')}; its source imports ${[...imported].join(', ')}`,
        );
      }
      for (const used of imported) {
        const below = rows.get(used);
        if (below !== undefined && below.floor >= row.floor) {
          wrong.push(`${name} (floor ${row.floor}) imports ${used} (floor ${below.floor})`);
        }
      }
    }
    expect(wrong).toEqual([]);
  });
});
