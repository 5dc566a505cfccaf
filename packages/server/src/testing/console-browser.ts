import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { chromium } from 'playwright-core';
import { defaultConsoleDir } from '../console-static.js';

const run = promisify(execFile);

/**
 * Builds the console (`vite build` in packages/console) so the served assets are those of the
 * sources under test, not a stale dist/.
 */
export async function buildConsole(): Promise<void> {
  const packageDir = path.dirname(defaultConsoleDir());
  const require = createRequire(path.join(packageDir, 'package.json'));
  const viteBin = path.join(path.dirname(require.resolve('vite/package.json')), 'bin', 'vite.js');
  await run(process.execPath, [viteBin, 'build', '--logLevel', 'warn'], { cwd: packageDir });
}

/**
 * The system's Chromium (Debian's `chromium`, installed by .ci/run) driven by playwright-core:
 * Playwright's own browser download cannot work on these machines. `CHROMIUM_BIN` overrides.
 */
function chromiumPath(): string {
  const candidates = [
    process.env['CHROMIUM_BIN'],
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
  ];
  const found = candidates.find((each) => each !== undefined && existsSync(each));
  if (found === undefined) {
    throw new Error("no Chromium found: install Debian's chromium or set CHROMIUM_BIN");
  }
  return found;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    // Root in a container has no user namespace for the sandbox; /dev/shm may be small.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
}
