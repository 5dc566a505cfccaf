/**
 * Telegraf, for the Influx endpoints' integration test. Debian does not package it, so it is
 * built from its pinned release through the Go module proxy, with only the plugins the test uses
 * (Telegraf's `custom` build tags: about a minute on 2 cores instead of the full agent), into the
 * testkit cache outside the work tree: `npm run services -- prepare-telegraf` builds it once.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { cachedAgentPath, ensureBuilt, runGo, writableCopy } from './go-build.js';
import { createServiceDir } from './service-dir.js';

/** Pinned: the agent docs/agents.md's Telegraf configuration was tried with. */
const telegrafVersion = 'v1.37.2';
const buildTags = 'custom,inputs.mem,outputs.influxdb,outputs.influxdb_v2';

function binaryPath(): string {
  return cachedAgentPath('telegraf', telegrafVersion);
}

/** Builds the pinned Telegraf unless it is there already. Needs `go` (1.24 or newer). */
async function ensureTelegraf(log: (line: string) => void): Promise<string> {
  return ensureBuilt(binaryPath(), async (work) => {
    const module = `github.com/influxdata/telegraf@${telegrafVersion}`;
    log(`downloading ${module} through the Go module proxy`);
    const { Dir: moduleDir } = JSON.parse(await runGo(['mod', 'download', '-json', module])) as {
      Dir: string;
    };
    // The module cache is read-only and `go build` writes go.sum entries: build in a copy.
    const src = await writableCopy(moduleDir, join(work, 'src'));
    log(`building telegraf ${telegrafVersion} with ${buildTags}`);
    await runGo(['build', '-tags', buildTags, '-o', join(work, 'telegraf'), './cmd/telegraf'], {
      cwd: src,
      env: { GOFLAGS: '-mod=mod' },
    });
    return join(work, 'telegraf');
  });
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
  /** The base URL docs/agents.md gives, e.g. `http://127.0.0.1:8080/api/v1/influx`. */
  url: string;
  key: string;
  /** The `host` tag of every point. */
  hostname: string;
};

/** The telegraf.conf of `options`: docs/agents.md's output block, reading memory every second. */
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
