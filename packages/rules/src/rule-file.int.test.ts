import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runPromtool } from '@monitor/testkit';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { parseRuleFile } from './parse-rule-file.js';
import { ruleFileArbitrary } from './testing/rule-file-arbitrary.js';
import { ruleFileCases } from './testing/rule-file-cases.js';

const dir = mkdtempSync(join(tmpdir(), 'rule-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** promtool's decision on each file (accepted or not), from one run over all of them. */
async function promtoolAccepts(texts: readonly string[]): Promise<boolean[]> {
  const files = texts.map((text, i) => {
    const file = `${String(i).padStart(4, '0')}.yml`;
    writeFileSync(join(dir, file), text);
    return file;
  });
  const { stderr } = await runPromtool(['check', 'rules', ...files], dir);
  // A refused file's errors are printed as `FILE: reason`. Duplicate rules are only a lint
  // warning (printed as FAILED without the file name, exit code 0): the file is accepted.
  const refused = new Set(
    stderr
      .split('\n')
      .map((line) => /^(\d{4}\.yml): /.exec(line)?.[1])
      .filter((file) => file !== undefined),
  );
  return files.map((file) => !refused.has(file));
}

describe('parseRuleFile against promtool check rules (Prometheus 2.42)', () => {
  it('decides every hand-written case as promtool does', async () => {
    const decisions = await promtoolAccepts(ruleFileCases.map((c) => c.text));
    const disagreements = ruleFileCases
      .map((c, i) => ({
        name: c.name,
        promtool: decisions[i],
        ours: parseRuleFile(c.text).ok,
        recorded: c.accepted,
      }))
      .filter((d) => d.promtool !== d.ours || d.promtool !== d.recorded);
    expect(disagreements).toEqual([]);
    expect(ruleFileCases.length).toBeGreaterThan(100);
  });

  it('decides generated files as promtool does', async () => {
    const texts = fc.sample(ruleFileArbitrary, { numRuns: 400, seed: 41 });
    const decisions = await promtoolAccepts(texts);
    const disagreements = texts
      .map((text, i) => ({ text, promtool: decisions[i], ours: parseRuleFile(text) }))
      .filter((d) => d.promtool !== d.ours.ok);
    expect(disagreements).toEqual([]);
    // Both sides of the decision are exercised.
    expect(decisions.filter(Boolean).length).toBeGreaterThan(40);
    expect(decisions.filter((d) => !d).length).toBeGreaterThan(40);
  });
});
