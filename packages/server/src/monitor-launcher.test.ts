import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const launcher = fileURLToPath(new URL('../bin/monitor.sh', import.meta.url));

/** The command line the launcher would exec for `args`, with echo standing in for node. */
function launched(args: string[], env: Record<string, string> = {}): string[] {
  const out = execFileSync('/bin/sh', [launcher, ...args], {
    env: { PATH: process.env['PATH'] ?? '', MONITOR_NODE: '/bin/echo', ...env },
    encoding: 'utf8',
  });
  return out.trim().split(' ');
}

describe('bin/monitor.sh, the image entrypoint', () => {
  it('gives the gateway 64 MiB semi-spaces and every other role 32', () => {
    expect(launched(['gateway'])).toContain('--max-semi-space-size=64');
    for (const role of ['all', 'writer', 'evaluator', 'api', 'migrate']) {
      expect(launched([role])).toContain('--max-semi-space-size=32');
    }
    expect(launched([])).toContain('--max-semi-space-size=32');
  });

  it('runs the built main with the arguments as given, after any extra flags', () => {
    const args = launched(['writer', '--help'], { MONITOR_NODE_FLAGS: '--cpu-prof --trace-gc' });
    expect(args.slice(0, 4)).toEqual([
      '--enable-source-maps',
      '--max-semi-space-size=32',
      '--cpu-prof',
      '--trace-gc',
    ]);
    expect(args.at(-3)?.endsWith('/bin/../dist/main.js')).toBe(true);
    expect(args.slice(-2)).toEqual(['writer', '--help']);
  });
});
