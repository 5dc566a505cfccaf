/**
 * The official PromQL compliance tester (github.com/prometheus/compliance, module `promql`),
 * built from the vendored source (`compliance-source.ts`) once, into the testkit cache outside
 * the work tree: `npm run services -- prepare-promql-compliance` builds it.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { complianceCommit, extractComplianceSource } from './compliance-source.js';
import { cachedAgentPath, ensureBuilt, runGo } from './go-build.js';

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
    const source = await extractComplianceSource(work, 'promql');
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
