import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { findExecutable } from './find-executable.js';
import { createServiceDir } from './service-dir.js';

export type CollectdOptions = {
  /** Where write_http POSTs, e.g. `http://127.0.0.1:8080/collectd`. */
  writeHttpUrl: string;
  /** Basic-auth user and password (our service reads the API key from the password). */
  user: string;
  password: string;
  /** The `host` of every value list; `testkit-collectd` when omitted. */
  hostname?: string;
  /** How often it reads and sends; 1 when omitted. */
  intervalSeconds?: number;
};

/** The read plugins it runs: cheap, and present on any Linux without root. */
export const collectdReadPlugins = ['cpu', 'memory', 'load', 'interface'] as const;

/**
 * collectd (Debian's 5.12) in the foreground with a generated config: `collectdReadPlugins`,
 * and write_http sending JSON with rates (StoreRates) to `writeHttpUrl`. Its base dir and pid
 * file are in a temp dir, never /var/lib/collectd. Resolves once its read loop runs.
 *
 * write_http leaves the auth scheme to libcurl (CURLAUTH_ANY), so collectd sends the
 * credentials only after a 401 that carries `WWW-Authenticate: Basic`, and then resends the
 * same body; from then on, every request carries them.
 */
export async function startCollectd(options: CollectdOptions): Promise<AgentProcess> {
  const command = findExecutable({
    name: 'collectd',
    envName: 'COLLECTD_BIN',
    debianPath: '/usr/sbin/collectd',
    probeArgs: ['-h'],
    installHint: 'apt-get install --no-install-recommends collectd libcurl3-gnutls libyajl2',
  });
  const dir = createServiceDir('collectd');
  const configFile = join(dir, 'collectd.conf');
  writeFileSync(configFile, collectdConfig(options, dir));
  return startAgentProcess({
    what: 'collectd',
    command,
    // -f: stay in the foreground, so that the watchdog's SIGTERM reaches collectd itself.
    args: ['-f', '-C', configFile, '-P', join(dir, 'collectd.pid')],
    dir,
    // collectd has no port to ask; its log says when the plugins are loaded and reading.
    probe: async ({ logFile }) => {
      const log = await readFile(logFile, 'utf8');
      if (!log.includes('Initialization complete, entering read-loop.')) {
        throw new Error('collectd has not entered its read loop yet');
      }
    },
  });
}

/** The collectd.conf for `options`, with `dir` as its base dir; exported for its unit test. */
export function collectdConfig(options: CollectdOptions, dir: string): string {
  const interval = options.intervalSeconds ?? 1;
  if (!(interval > 0)) throw new Error(`not a positive interval: ${interval} s`);
  return [
    `Hostname ${quote(options.hostname ?? 'testkit-collectd')}`,
    'FQDNLookup false',
    `BaseDir ${quote(dir)}`,
    `PIDFile ${quote(join(dir, 'collectd.pid'))}`,
    `Interval ${interval}`,
    'LoadPlugin logfile',
    '<Plugin logfile>',
    '  LogLevel info',
    '  File STDOUT',
    '  Timestamp true',
    '</Plugin>',
    ...collectdReadPlugins.map((plugin) => `LoadPlugin ${plugin}`),
    'LoadPlugin write_http',
    '<Plugin write_http>',
    '  <Node "testkit">',
    `    URL ${quote(options.writeHttpUrl)}`,
    `    User ${quote(options.user)}`,
    `    Password ${quote(options.password)}`,
    '    Format "JSON"',
    '    StoreRates true',
    // Milliseconds: a receiver that hangs must not stall collectd's write thread for long.
    '    Timeout 2000',
    '  </Node>',
    '</Plugin>',
    '',
  ].join('\n');
}

/** A collectd config string: double quotes, with `\` and `"` escaped by a backslash. */
function quote(value: string): string {
  if (/[\n\r]/.test(value)) throw new Error('a collectd config string cannot hold a line break');
  return `"${value.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}
