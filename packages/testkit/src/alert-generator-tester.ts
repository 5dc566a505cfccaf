/**
 * The official alert generator compliance suite (github.com/prometheus/compliance, module
 * `alert_generator`): it remote-writes its samples to the software under test, queries it, reads
 * its rules and alerts APIs, and receives its alerts as an Alertmanager would. Built from the
 * vendored source (`compliance-source.ts`) once, into the testkit cache outside the work tree:
 * `npm run services -- prepare-alert-generator` builds it.
 */
import { copyFile, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { complianceCommit, extractComplianceSource } from './compliance-source.js';
import { cachedAgentPath, ensureBuilt, runGo } from './go-build.js';
import { createServiceDir, markOwner } from './service-dir.js';
import { startSupervised } from './supervised-process.js';

const name = 'alert-generator-compliance-tester';

export type AlertGeneratorTester = {
  /** The `alert_generator_compliance_tester` binary. */
  binary: string;
  /** Its `rules.yaml`, from the same source: what the software under test loads, unchanged. */
  rules: string;
};

/**
 * Builds the tester from the tarball unless it is built already; keeps its rules file beside
 * it. Needs `go` (1.25 or newer) and `tar`.
 */
export async function ensureAlertGeneratorTester(
  log: (line: string) => void = () => {},
): Promise<AlertGeneratorTester> {
  const target = cachedAgentPath(name, complianceCommit);
  const rules = join(dirname(target), 'rules.yaml');
  const binary = await ensureBuilt(target, async (work) => {
    const source = await extractComplianceSource(work, 'alert_generator');
    log(`building ${name} ${complianceCommit} (modules from the Go module proxy)`);
    await runGo(['build', '-o', join(work, 'tester'), './cmd/alert_generator_compliance_tester'], {
      cwd: source,
      env: { GOFLAGS: '-mod=mod' },
    });
    // The rules go in first: the binary's presence is what says the cache is complete.
    await mkdir(dirname(rules), { recursive: true });
    await copyFile(join(source, 'rules.yaml'), rules);
    return join(work, 'tester');
  });
  return { binary, rules };
}

/** Where the suite finds the software under test (its `settings` and `auth`). */
export type AlertGeneratorTarget = {
  /** Prometheus remote-write endpoint, e.g. `http://127.0.0.1:8080/api/v1/write`. */
  remoteWriteUrl: string;
  /** Base of `/api/v1/query`, `/api/v1/rules` and `/api/v1/alerts`. */
  prometheusApiUrl: string;
  /** The port its Alertmanager stand-in listens on: the alerts go to `http://<host>:<port>`. */
  alertReceptionPort: number;
  /** Basic auth for every request it makes. */
  basicAuth: { username: string; password: string };
};

export type AlertGeneratorResult = {
  /** Its exit code: 0 when every case passed. */
  code: number;
  /** Everything it printed: its log, then `Congrats! All tests passed` or what went wrong. */
  output: string;
};

/** The tester's config file (YAML; JSON is YAML), every case enabled. */
function testerConfig(target: AlertGeneratorTarget): string {
  const auth = {
    basic_auth_user: target.basicAuth.username,
    basic_auth_pass: target.basicAuth.password,
  };
  return JSON.stringify({
    settings: {
      remote_write_url: target.remoteWriteUrl,
      query_base_url: target.prometheusApiUrl,
      rules_and_alerts_api_base_url: target.prometheusApiUrl,
      alert_reception_server_port: target.alertReceptionPort,
      alert_message_parser: 'default',
    },
    auth: { remote_write: auth, rules_and_alerts_api: auth, query: auth },
  });
}

/**
 * Runs the whole suite against `target` to its end: about 40 minutes of wall time by its design,
 * less when every case has failed. Its process runs under a watchdog, so it ends with the caller
 * however that one ends; `signal` stops it early.
 */
export async function runAlertGeneratorTester(
  tester: AlertGeneratorTester,
  target: AlertGeneratorTarget,
  options: { signal?: AbortSignal } = {},
): Promise<AlertGeneratorResult> {
  const dir = createServiceDir('alert-generator');
  const config = join(dir, 'config.yaml');
  await writeFile(config, testerConfig(target));
  // Not removed by the watchdog: its log is read once it has ended.
  const supervised = startSupervised({
    command: tester.binary,
    args: [`-config-file=${config}`],
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin' },
    logFile: join(dir, 'tester.log'),
  });
  markOwner(dir, supervised.pid);
  const stop = (): void => void supervised.stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    const code = await supervised.exited;
    const output = await readFile(supervised.logFile, 'utf8');
    // A stopped tester exits as a finished one would: it did not run to its end.
    if (options.signal?.aborted === true) throw new Error(`the suite was stopped:\n${output}`);
    return { code, output };
  } finally {
    options.signal?.removeEventListener('abort', stop);
    await rm(dir, { recursive: true, force: true });
  }
}

/** The CLI's `prepare-alert-generator` command. */
export function addAlertGeneratorTesterCommand(program: Command): void {
  program
    .command('prepare-alert-generator')
    .description(
      `build the alert generator compliance tester ${complianceCommit} from the vendored tarball (Go module proxy)`,
    )
    .action(async () => {
      const tester = await ensureAlertGeneratorTester((line) => process.stderr.write(`${line}\n`));
      process.stdout.write(`${name} ${complianceCommit}: ${tester.binary}\n`);
    });
}
