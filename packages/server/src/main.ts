/**
 * The one entry point: `monitor <role>` runs a role (gateway, writer, api, all);
 * `monitor migrate`, `monitor orgs …`, `monitor keys …` and `monitor rules load` administer the
 * database; `monitor capacity` plans a deployment; `monitor config-reference` prints
 * docs/configuration.md. Only this file touches `process`: argv,
 * signals and exit codes.
 */
import { Command } from 'commander';
import { ConfigError, createMetrics, createShutdown, parseConfig } from '@monitor/platform';
import { createAdminCommands } from './admin-commands.js';
import { createCapacityCommand } from './capacity/capacity-command.js';
import { renderConfigurationReference } from './config-reference.js';
import type { Role } from './config.js';
import { adminConfigSchema, parseRoleConfig, roles } from './config.js';
import { createProcessLogger } from './process-logger.js';
import type { RoleContext } from './role-context.js';
import { startRole } from './roles/start-role.js';

/**
 * Parses the configuration before anything else happens: on a bad or missing variable it names
 * every one (never a value) and exits 1, before a file, socket or connection is opened.
 */
function loadConfig<T>(command: string, parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${command}: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}

async function runRole(role: Role): Promise<void> {
  const start = loadConfig(`monitor ${role}`, () => parseRoleConfig(role));
  const { config } = start;
  const logger = createProcessLogger(config, `monitor-${role}`);
  const shutdown = createShutdown({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS });
  const ctx: RoleContext = {
    logger,
    metrics: createMetrics({ defaultLabels: { role } }),
    shutdown,
  };
  // A signal stops the process with 0 when every hook finished; a shutdown that a component
  // began (the consumers thread of role `all` died) ends it with 1.
  let exitCode = 1;
  shutdown.signal.addEventListener('abort', () => {
    void shutdown.shutdown().then((result) => {
      logger.info({ ok: result.ok, failed: result.failed, pending: result.pending }, 'stopped');
      process.exit(result.ok ? exitCode : 1);
    });
  });
  // `on`, not `once`: a signal often comes twice (Ctrl-C or `kill -- -pgid` reaches tsx's
  // parent process too, which relays it), and with no listener left the second one would end
  // the process mid-shutdown. The shutdown's own deadline bounds the wait; SIGKILL forces it.
  const stop = (signal: string): void => {
    if (shutdown.isShuttingDown) {
      logger.info({ signal }, 'already shutting down');
      return;
    }
    logger.info({ signal }, 'shutting down');
    exitCode = 0;
    void shutdown.shutdown(signal);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  try {
    await startRole(start, ctx);
    logger.info({ role }, 'started');
  } catch (err) {
    logger.fatal({ err }, 'failed to start');
    await shutdown.shutdown('start failed');
    process.exit(1);
  }
}

const program = new Command('monitor').description('Host monitoring service');
for (const role of roles) {
  program
    .command(role)
    .description(role === 'all' ? 'every role in one process' : `the ${role} role`)
    .action(() => runRole(role));
}
const admin = createAdminCommands({
  loadConfig: () => loadConfig('monitor', () => parseConfig(adminConfigSchema)),
  createLogger: (config, name) => createProcessLogger(config, name, 'stderr'),
});
for (const command of admin) program.addCommand(command);
program.addCommand(createCapacityCommand((text) => process.stdout.write(text)));
program
  .command('config-reference')
  .description('print the table of every setting of every role (docs/configuration.md)')
  .action(() => {
    process.stdout.write(renderConfigurationReference());
  });

await program.parseAsync(process.argv).catch((err: unknown) => {
  // The typed database errors say what kind of failure it was; the operator of a one-shot
  // command also needs the server's own words (the cause), e.g. which object blocked a change.
  const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}${cause}\n`);
  process.exit(1);
});
