/**
 * The official PromQL compliance tester (github.com/prometheus/compliance, module `promql`). The
 * Go module proxy refuses that module, so it is built from the upstream source tarball vendored
 * beside the clone (`../shared/vendor`, or `MONITOR_PROMQL_COMPLIANCE_TARBALL`), its
 * dependencies coming from the proxy, once, into the testkit cache outside the work tree:
 * `npm run services -- prepare-promql-compliance` builds it.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import { cachedAgentPath, ensureBuilt, runGo } from './go-build.js';

const execFileAsync = promisify(execFile);

/** Pinned: the upstream commit the vendored tarball was made from. */
const complianceCommit = '67b8327';
const tarballName = `prometheus-compliance-${complianceCommit}.tar.gz`;

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** The vendored source tarball: `MONITOR_PROMQL_COMPLIANCE_TARBALL`, else beside the clone. */
function tarballPath(): string {
  return (
    process.env['MONITOR_PROMQL_COMPLIANCE_TARBALL'] ??
    resolve(repoRoot, '..', 'shared', 'vendor', tarballName)
  );
}

function binaryPath(): string {
  return cachedAgentPath('promql-compliance-tester', complianceCommit);
}

export type ComplianceTester = {
  /** The `promql-compliance-tester` binary. */
  binary: string;
  /** Its standard test-case file, `promql-test-queries.yml`, from the same source. */
  testQueries: string;
};

/**
 * Builds the tester from the tarball unless it is built already; keeps the standard test-case
 * file beside it. Needs `go` (1.25 or newer) and `tar`.
 */
export async function ensureComplianceTester(
  log: (line: string) => void = () => {},
): Promise<ComplianceTester> {
  const testQueries = join(dirname(binaryPath()), 'promql-test-queries.yml');
  const binary = await ensureBuilt(binaryPath(), async (work) => {
    const tarball = tarballPath();
    if (!existsSync(tarball)) {
      throw new Error(
        `${tarball} is missing: set MONITOR_PROMQL_COMPLIANCE_TARBALL to the vendored ${tarballName}`,
      );
    }
    await execFileAsync('tar', ['-xzf', tarball, '-C', work]);
    const source = join(work, `prometheus-compliance-${complianceCommit}`, 'promql');
    log(`building promql-compliance-tester ${complianceCommit} (modules from the Go module proxy)`);
    await runGo(['build', '-o', join(work, 'tester'), './cmd/promql-compliance-tester'], {
      cwd: source,
      env: { GOFLAGS: '-mod=mod' },
    });
    // The test cases go in first: the binary's presence is what says the cache is complete.
    await mkdir(dirname(testQueries), { recursive: true });
    await copyFile(join(source, 'promql-test-queries.yml'), testQueries);
    return join(work, 'tester');
  });
  return { binary, testQueries };
}

/** The CLI's `prepare-promql-compliance` command. */
export function addComplianceTesterCommand(program: Command): void {
  program
    .command('prepare-promql-compliance')
    .description(
      `build the PromQL compliance tester ${complianceCommit} from the vendored tarball (Go module proxy)`,
    )
    .action(async () => {
      const tester = await ensureComplianceTester((line) => process.stderr.write(`${line}\n`));
      process.stdout.write(`promql-compliance-tester ${complianceCommit}: ${tester.binary}\n`);
    });
}
