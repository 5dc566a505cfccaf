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

function markdownFiles(): string[] {
  const docs = join(repoRoot, 'docs');
  return [
    join(repoRoot, 'README.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(docs, name)),
  ];
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
});
