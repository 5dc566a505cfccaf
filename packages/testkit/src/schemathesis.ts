/**
 * Schemathesis, the OpenAPI fuzzer of the conformance test, pinned and installed from PyPI into a
 * Python virtual environment in the testkit cache (outside the work tree, like the Kafka jars):
 * `npm run services -- prepare-schemathesis` installs it once; the test only looks it up.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';

/** Pinned: a newer release may generate other cases or add checks, which is a change to review. */
export const schemathesisVersion = '4.32.5';

/** The command that installs it, for messages. */
const schemathesisInstallCommand = 'npm run services -- prepare-schemathesis';

const pipTimeoutMs = 10 * 60_000;
const markerName = 'monitor-schemathesis.version';

function venvDir(): string {
  const cache =
    process.env['MONITOR_TESTKIT_CACHE'] ?? join(homedir(), '.cache', 'monitor-testkit');
  return join(cache, `schemathesis-${schemathesisVersion}`);
}

/** How to run the pinned schemathesis: `command ...args run <schema> …`. */
type SchemathesisCommand = { command: string; args: string[] };

function commandIn(dir: string): SchemathesisCommand {
  // The venv's own interpreter, not its `st` script: scripts name the interpreter by absolute
  // path, so they break when the venv is moved into place, while `python -m` does not.
  return { command: join(dir, 'bin', 'python3'), args: ['-m', 'schemathesis.cli'] };
}

function isComplete(dir: string): boolean {
  try {
    return (
      readFileSync(join(dir, markerName), 'utf8').trim() === schemathesisVersion &&
      existsSync(join(dir, 'bin', 'python3'))
    );
  } catch {
    return false;
  }
}

/** The pinned schemathesis, or undefined when it is not installed yet. */
function findSchemathesis(): SchemathesisCommand | undefined {
  const dir = venvDir();
  return isComplete(dir) ? commandIn(dir) : undefined;
}

type SchemathesisRun = {
  code: number | null;
  /** What it printed, lines over 2,000 characters shortened, for failure messages. */
  output: string;
  /** Its "Test cases" line, e.g. `2813 generated, 2813 passed`. */
  summary: string;
  /** Test cases in its junit report: one an operation at least when every operation ran. */
  testCases: number;
};

/**
 * Runs the pinned schemathesis over the document served at `${baseUrl}/api/v1/openapi.json`,
 * sending `apiKey` as X-API-Key, with a fixed seed (a failure reproduces), one worker (hypothesis
 * describes its strategies with ast.parse, which Debian 12's CPython 3.11 breaks on when two
 * threads parse at once), no shrinking and no example database. Its report and any files it
 * writes stay in a temporary directory, removed afterwards. Throws when it is not installed.
 */
export async function runSchemathesis(options: {
  baseUrl: string;
  apiKey: string;
  checks: readonly string[];
  seed: number;
  maxExamples: number;
  extraArgs?: readonly string[];
}): Promise<SchemathesisRun> {
  const schemathesis = findSchemathesis();
  if (schemathesis === undefined) {
    throw new Error(
      `schemathesis ${schemathesisVersion} is not installed: run \`${schemathesisInstallCommand}\` ` +
        '(it needs python3 with venv, e.g. apt-get install python3-venv, and PyPI)',
    );
  }
  const workDir = await mkdtemp(join(tmpdir(), 'monitor-schemathesis-'));
  try {
    const junit = join(workDir, 'junit.xml');
    const args = [
      ...schemathesis.args,
      '--no-color',
      'run',
      `${options.baseUrl}/api/v1/openapi.json`,
      '--url',
      options.baseUrl,
      '--header',
      `X-API-Key: ${options.apiKey}`,
      '--checks',
      options.checks.join(','),
      '--seed',
      String(options.seed),
      '--max-examples',
      String(options.maxExamples),
      '--workers',
      '1',
      '--no-shrink',
      '--generation-database',
      'none',
      '--request-timeout',
      '10',
      '--report',
      'junit',
      '--report-junit-path',
      junit,
      ...(options.extraArgs ?? []),
    ];
    const { code, output } = await new Promise<{ code: number | null; output: string }>(
      (resolve, reject) => {
        const child = spawn(schemathesis.command, args, {
          cwd: workDir,
          env: { ...process.env, NO_COLOR: '1', PYTHONUNBUFFERED: '1' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let text = '';
        child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (text += chunk.toString()));
        child.once('error', reject);
        child.once('exit', (exitCode) => resolve({ code: exitCode, output: text }));
      },
    );
    const report = existsSync(junit) ? await readFile(junit, 'utf8') : '';
    return {
      code,
      // A failing case's curl line carries the whole generated body (hundreds of KB): shortened,
      // so the status and the check that failed stay within a failure message.
      output: output
        .split('\n')
        .map((line) => (line.length > 2_000 ? `${line.slice(0, 2_000)} …` : line))
        .join('\n'),
      summary: /Test cases:\s*\n?\s*(.+)/.exec(output)?.[1] ?? 'no summary',
      testCases: report.match(/<testcase /g)?.length ?? 0,
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

/**
 * Installs the pinned schemathesis unless it is there already. Idempotent, and safe to run
 * concurrently: each run builds in a directory of its own, marks it complete, and moves it into
 * place unless another run was first. Needs `python3` with the `venv` module (Debian: the
 * `python3-venv` package) and access to PyPI.
 */
async function ensureSchemathesis(
  log: (line: string) => void = () => undefined,
): Promise<SchemathesisCommand> {
  const dir = venvDir();
  if (isComplete(dir)) return commandIn(dir);
  await mkdir(dirname(dir), { recursive: true });
  const partial = await mkdtemp(`${dir}.partial-`);
  try {
    log(`creating a Python virtual environment in ${partial}`);
    await run('python3', ['-m', 'venv', partial]);
    log(`installing schemathesis==${schemathesisVersion} from PyPI`);
    await run(join(partial, 'bin', 'pip'), [
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-input',
      `schemathesis==${schemathesisVersion}`,
    ]);
    await writeFile(join(partial, markerName), schemathesisVersion);
    if (!isComplete(dir)) {
      await rm(dir, { recursive: true, force: true });
      await rename(partial, dir);
    }
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  if (!isComplete(dir)) throw new Error(`schemathesis was installed but ${dir} is incomplete`);
  return commandIn(dir);
}

function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), pipTimeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(
        new Error(
          `${command} could not run (${err.message}): schemathesis needs python3 with the venv ` +
            'module (Debian: apt-get install python3-venv)',
        ),
      );
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve();
      else
        reject(
          new Error(
            `${command} ${args.join(' ')} failed (${signal ?? `exit ${code}`}):\n${output.slice(-4000)}` +
              (output.includes('ensurepip')
                ? '\n(Debian: apt-get install python3-venv provides ensurepip)'
                : ''),
          ),
        );
    });
  });
}

/** The CLI's `prepare-schemathesis` command. */
export function addSchemathesisCommand(program: Command): void {
  program
    .command('prepare-schemathesis')
    .description(`install schemathesis ${schemathesisVersion} (PyPI) for the OpenAPI fuzz test`)
    .action(async () => {
      const st = await ensureSchemathesis((line) => process.stderr.write(`${line}\n`));
      process.stdout.write(
        `schemathesis ${schemathesisVersion}: ${st.command} ${st.args.join(' ')}\n`,
      );
    });
}
