import { Command, InvalidArgumentError } from 'commander';
import type { ApiKeyScope as Scope, Database } from '@monitor/db';
import { createApiKeyStore, createDatabase, createOrgStore, migrate } from '@monitor/db';
import type { ServerConfig } from './config.js';
import { createProcessLogger } from './process-logger.js';

const allScopes: readonly Scope[] = ['ingest', 'read', 'write'];

/** `migrate`, `orgs create`, `keys create|list|revoke`: one-shot commands against DATABASE_URL. */
export function createAdminCommands(deps: { loadConfig: () => ServerConfig }): Command[] {
  async function withDatabase<T>(
    fn: (db: Database, config: ServerConfig) => Promise<T>,
  ): Promise<T> {
    const config = deps.loadConfig();
    if (config.DATABASE_URL === undefined) throw new Error('DATABASE_URL is required');
    const db = createDatabase({
      url: config.DATABASE_URL,
      maxConnections: 1,
      applicationName: 'monitor-admin',
    });
    try {
      return await fn(db, config);
    } finally {
      await db.close();
    }
  }
  const print = (value: unknown): void => {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  };

  const migrateCommand = new Command('migrate')
    .description(
      'apply pending database migrations (TimescaleDB when available, else plain PostgreSQL)',
    )
    .action(() =>
      withDatabase(async (db, config) => {
        const logger = createProcessLogger(config, 'monitor-migrate');
        const result = await migrate(db, {
          rawRetentionDays: config.RAW_RETENTION_DAYS,
          snapshotRetentionDays: config.SNAPSHOT_RETENTION_DAYS,
          compressAfterDays: config.COMPRESS_AFTER_DAYS,
        });
        logger.info(result, 'migrated');
      }),
    );

  const orgs = new Command('orgs').description('organizations');
  orgs
    .command('create')
    .argument('<name>', 'organization name')
    .description('create an organization and print it')
    .action((name: string) =>
      withDatabase(async (db) => print(await createOrgStore(db).createOrganization(name))),
    );

  const keys = new Command('keys').description('API keys');
  keys
    .command('create')
    .requiredOption('--org <id>', 'organization id (org_…)')
    .option('--scopes <list>', `comma-separated: ${allScopes.join(', ')}`, parseScopes, [
      ...allScopes,
    ])
    .option('--name <name>', 'a label for the key', 'cli')
    .description('create a key; the key itself is printed once and never again')
    .action((options: { org: string; scopes: Scope[]; name: string }) =>
      withDatabase(async (db) => {
        const org = await createOrgStore(db).getOrganization(options.org);
        if (org === undefined) throw new Error(`organization ${options.org} does not exist`);
        const created = await createApiKeyStore(db).createKey({
          orgId: org.id,
          name: options.name,
          scopes: options.scopes,
        });
        print({ key: created.key, ...created.record });
      }),
    );
  keys
    .command('list')
    .option('--org <id>', 'only this organization')
    .description('list keys (never their secret part)')
    .action((options: { org?: string }) =>
      withDatabase(async (db) => print(await createApiKeyStore(db).listKeys(options.org))),
    );
  keys
    .command('revoke')
    .argument('<id>', 'key id (key_…)')
    .description('revoke a key; gateways stop accepting it within API_KEY_CACHE_TTL_MS')
    .action((id: string) =>
      withDatabase(async (db) => {
        const revoked = await createApiKeyStore(db).revokeKey(id);
        if (!revoked) throw new Error(`no active key ${id}`);
        print({ id, revoked: true });
      }),
    );

  return [migrateCommand, orgs, keys];
}

function parseScopes(value: string): Scope[] {
  const scopes = value
    .split(',')
    .map((scope) => scope.trim())
    .filter((scope) => scope !== '');
  const unknown = scopes.filter((scope) => !(allScopes as readonly string[]).includes(scope));
  if (unknown.length > 0 || scopes.length === 0) {
    throw new InvalidArgumentError(
      `scopes are a comma-separated subset of ${allScopes.join(', ')}`,
    );
  }
  return [...new Set(scopes)] as Scope[];
}
