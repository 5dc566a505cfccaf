/**
 * The source of github.com/prometheus/compliance that the official testers build from: the Go
 * module proxy refuses its modules, so it comes from the upstream tarball vendored beside the
 * clone (`../shared/vendor`, or `MONITOR_PROMQL_COMPLIANCE_TARBALL`, named for the first tester
 * built from it), their dependencies from the proxy.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Pinned: the upstream commit the vendored tarball was made from. */
export const complianceCommit = '67b8327';
const tarballName = `prometheus-compliance-${complianceCommit}.tar.gz`;

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/** The vendored source tarball: `MONITOR_PROMQL_COMPLIANCE_TARBALL`, else beside the clone. */
function tarballPath(): string {
  return (
    process.env['MONITOR_PROMQL_COMPLIANCE_TARBALL'] ??
    resolve(repoRoot, '..', 'shared', 'vendor', tarballName)
  );
}

/** Extracts the tarball into `workDir`; resolves with the source's directory `module` in it. */
export async function extractComplianceSource(workDir: string, module: string): Promise<string> {
  const tarball = tarballPath();
  if (!existsSync(tarball)) {
    throw new Error(
      `${tarball} is missing: set MONITOR_PROMQL_COMPLIANCE_TARBALL to the vendored ${tarballName}`,
    );
  }
  await execFileAsync('tar', ['-xzf', tarball, '-C', workDir]);
  return join(workDir, `prometheus-compliance-${complianceCommit}`, module);
}
