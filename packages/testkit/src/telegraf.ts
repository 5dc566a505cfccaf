/**
 * Telegraf, for the Influx endpoints' integration test. Debian does not package it, so it is
 * built from its pinned release through the Go module proxy, with only the plugins the test uses
 * (Telegraf's `custom` build tags: about a minute on 2 cores instead of the full agent), into the
 * testkit cache outside the work tree: `npm run services -- prepare-telegraf` builds it once.
 */
import { execFile } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { Command } from 'commander';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { createServiceDir } from './service-dir.js';

const run = promisify(execFile);

/** Pinned: the agent our README's Telegraf configuration was tried with. */
const telegrafVersion = 'v1.37.2';
const buildTags = 'custom,inputs.mem,outputs.influxdb,outputs.influxdb_v2';
const buildTimeoutMs = 20 * 60_000;

function binaryPath(): string {
  const cache =
    process.env['MONITOR_TESTKIT_CACHE'] ?? join(homedir(), '.cache', 'monitor-testkit');
  return join(cache, `telegraf-${telegrafVersion}`, 'telegraf');
}

/**
 * Builds the pinned Telegraf unless it is there already. Needs `go` (1.24 or newer) and the Go
 * module proxy. Each run builds in a directory of its own and moves the binary into place.
 */
async function ensureTelegraf(log: (line: string) => void): Promise<string> {
  const target = binaryPath();
  if (existsSync(target)) return target;
  const module = `github.com/influxdata/telegraf@${telegrafVersion}`;
  log(`downloading ${module} through the Go module proxy`);
  const { stdout } = await run('go', ['mod', 'download', '-json', module], {
    timeout: buildTimeoutMs,
    maxBuffer: 16 * 1024 * 1024,
  });
  const { Dir: moduleDir } = JSON.parse(stdout) as { Dir: string };
  const work = await mkdtemp(join(homedir(), '.cache', 'telegraf-build-'));
  try {
    // The module cache is read-only and `go build` writes go.sum entries: build in a copy.
    await cp(moduleDir, join(work, 'src'), { recursive: true });
    await run('chmod', ['-R', 'u+w', join(work, 'src')]);
    log(`building telegraf ${telegrafVersion} with ${buildTags}`);
    await run('go', ['build', '-tags', buildTags, '-o', join(work, 'telegraf'), './cmd/telegraf'], {
      cwd: join(work, 'src'),
      timeout: buildTimeoutMs,
      env: { ...process.env, GOFLAGS: '-mod=mod' },
      maxBuffer: 16 * 1024 * 1024,
    });
    await mkdir(join(target, '..'), { recursive: true });
    if (!existsSync(target)) await rename(join(work, 'telegraf'), target);
    return target;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** The CLI's `prepare-telegraf` command. */
export function addTelegrafCommand(program: Command): void {
  program
    .command('prepare-telegraf')
    .description(
      `build telegraf ${telegrafVersion} (Go module proxy) for the Influx endpoints' test`,
    )
    .action(async () => {
      const binary = await ensureTelegraf((line) => process.stderr.write(`${line}\n`));
      process.stdout.write(`telegraf ${telegrafVersion}: ${binary}\n`);
    });
}

export type TelegrafOptions = {
  /** `v2`: `[[outputs.influxdb_v2]]` with the key as token; `v1`: `[[outputs.influxdb]]` with it as password. */
  output: 'v1' | 'v2';
  /** The base URL the README gives, e.g. `http://127.0.0.1:8080/api/v1/influx`. */
  url: string;
  key: string;
  /** The `host` tag of every point. */
  hostname: string;
};

/** The telegraf.conf of `options`: the README's output block, reading memory every second. */
function telegrafConfig(options: TelegrafOptions): string {
  const quote = (value: string): string => JSON.stringify(value);
  const output =
    options.output === 'v2'
      ? [
          '[[outputs.influxdb_v2]]',
          `  urls = [${quote(options.url)}]`,
          `  token = ${quote(options.key)}`,
          '  organization = "any"',
          '  bucket = "any"',
        ]
      : [
          '[[outputs.influxdb]]',
          `  urls = [${quote(options.url)}]`,
          '  username = "telegraf"',
          `  password = ${quote(options.key)}`,
          '  skip_database_creation = true',
        ];
  return [
    '[agent]',
    '  interval = "1s"',
    '  flush_interval = "1s"',
    `  hostname = ${quote(options.hostname)}`,
    '[[inputs.mem]]',
    ...output,
    '',
  ].join('\n');
}

/** Telegraf in the foreground with `telegrafConfig(options)`; `prepare-telegraf` must have run. */
export async function startTelegraf(options: TelegrafOptions): Promise<AgentProcess> {
  const command = binaryPath();
  if (!existsSync(command)) {
    throw new Error(`no telegraf at ${command}: run npm run services -- prepare-telegraf`);
  }
  const dir = createServiceDir('telegraf');
  const configFile = join(dir, 'telegraf.conf');
  writeFileSync(configFile, telegrafConfig(options));
  return startAgentProcess({
    what: 'telegraf',
    command,
    args: ['--config', configFile],
    dir,
    probe: async ({ logFile }) => {
      const log = await readFile(logFile, 'utf8');
      if (!log.includes('Loaded outputs:'))
        throw new Error('telegraf has not loaded its outputs yet');
    },
  });
}
