/**
 * Developer CLI: `npm run services -- up [names...]` starts real PostgreSQL, TimescaleDB, Kafka and
 * Redis (the same way the integration tests do), prints `export NAME=url` lines for a shell, and
 * keeps them up until Ctrl-C; `npm run services -- down` stops a running `up` from another shell.
 */
import { Command, InvalidArgumentError } from 'commander';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ServiceName } from './service.js';
import { addAlertGeneratorTesterCommand } from './alert-generator-tester.js';
import { ensureKafkaJars } from './kafka.js';
import { addCollectorCommand } from './otelcol.js';
import { addNativeHistogramExporterCommand } from './native-histogram-exporter.js';
import { addComplianceTesterCommand } from './promql-compliance-tester.js';
import { addSchemathesisCommand } from './schemathesis.js';
import { addTelegrafCommand } from './telegraf.js';
import { serviceNames } from './service.js';
import { startServices } from './start-services.js';

const pidFile = join(
  process.env['MONITOR_TESTKIT_CACHE'] ?? join(homedir(), '.cache', 'monitor-testkit'),
  'services-cli.pid',
);

const program = new Command('services').description(
  'Real services for development and the benchmark',
);

program
  .command('up')
  .description('start the services, print their URLs as export lines, keep them up until Ctrl-C')
  .argument('[names...]', `any of ${serviceNames.join(', ')} (default: all)`, parseNames)
  .action(async (names: ServiceName[] | undefined) => {
    const started = await startServices(names && names.length > 0 ? names : serviceNames, {
      log: (message, level) =>
        process.stderr.write(`${level === 'warn' ? 'WARN ' : ''}${message}\n`),
    });
    mkdirSync(dirname(pidFile), { recursive: true });
    writeFileSync(pidFile, String(process.pid));
    for (const [name, url] of Object.entries(started.env))
      process.stdout.write(`export ${name}=${url}\n`);
    process.stderr.write('services are up; Ctrl-C (or `npm run services -- down`) stops them\n');
    // `on` and a flag: Ctrl-C reaches tsx's parent too, which relays it, and a second signal
    // with no listener left would end this process before its services are stopped.
    let stopping = false;
    const stop = (): void => {
      if (stopping) return;
      stopping = true;
      process.stderr.write('stopping services\n');
      started.stop().then(
        () => {
          rmSync(pidFile, { force: true });
          process.exit(0);
        },
        (err: unknown) => {
          process.stderr.write(`${String(err)}\n`);
          process.exit(1);
        },
      );
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });

program
  .command('prepare')
  .description('download what the native services need ahead of time (the Kafka jars)')
  .action(async () => {
    process.stdout.write(`kafka jars in ${await ensureKafkaJars()}\n`);
  });

addTelegrafCommand(program);
addCollectorCommand(program);
addNativeHistogramExporterCommand(program);
addComplianceTesterCommand(program);
addAlertGeneratorTesterCommand(program);
addSchemathesisCommand(program);

program
  .command('down')
  .description('stop the services of a running `up`')
  .action(() => {
    let pid: number;
    try {
      pid = Number(readFileSync(pidFile, 'utf8'));
    } catch {
      process.stderr.write('no services are up (no pid file)\n');
      return;
    }
    if (!isServicesCli(pid)) {
      rmSync(pidFile, { force: true });
      process.stderr.write(`the services CLI (pid ${pid}) is no longer running\n`);
      return;
    }
    try {
      process.kill(pid, 'SIGTERM');
      process.stderr.write(`asked the services CLI (pid ${pid}) to stop them\n`);
    } catch {
      rmSync(pidFile, { force: true });
      process.stderr.write(`the services CLI (pid ${pid}) is no longer running\n`);
    }
  });

/** Guards against a stale pid file whose pid now belongs to another program. */
function isServicesCli(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('testkit');
  } catch {
    return false;
  }
}

function parseNames(value: string, previous: ServiceName[] = []): ServiceName[] {
  if (!(serviceNames as readonly string[]).includes(value)) {
    throw new InvalidArgumentError(`unknown service '${value}'; known: ${serviceNames.join(', ')}`);
  }
  return [...previous, value as ServiceName];
}

await program.parseAsync(process.argv);
