import { readFile } from 'node:fs/promises';
import { parse as parsePath } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import type { ApiKeyScope as Scope, Database } from '@monitor/db';
import {
  convertToTimescale,
  createApiKeyStore,
  createDatabase,
  createOrgStore,
  createRuleGroupStore,
  migrate,
} from '@monitor/db';
import { createKafkaBus } from '@monitor/bus';
import { parseRuleFile, ruleGroupKeys } from '@monitor/rules';
import type { Logger } from '@monitor/platform';
import { embeddedPostgresDir } from '@monitor/platform';
import type { AdminConfig } from './config.js';
import { migrationOptions } from './config.js';
import { useEmbeddedPostgres } from './embedded-postgres.js';
import { warnOfMigration } from './migration-warnings.js';
import { migrateSampleShards } from './sample-shards.js';
import { createShardsCommand } from './shard-commands.js';

const allScopes: readonly Scope[] = ['ingest', 'read', 'write'];

/**
 * `migrate`, `orgs create`, `keys create|list|revoke`, `rules load`, `shards list|add|move`:
 * one-shot commands against DATABASE_URL,
 * or, when it is unset, against the embedded PostgreSQL of `npm start` (MONITOR_DATA_DIR): the
 * running server's, or one started for the command and stopped after it.
 */
export function createAdminCommands(deps: {
  loadConfig: () => AdminConfig;
  /** Progress and errors of a command; stdout is for the command's JSON result alone. */
  createLogger: (config: AdminConfig, name: string) => Logger;
}): Command[] {
  async function withDatabase<T>(
    fn: (db: Database, config: AdminConfig) => Promise<T>,
  ): Promise<T> {
    const config = deps.loadConfig();
    const embedded =
      config.DATABASE_URL === undefined
        ? await useEmbeddedPostgres({
            dataDir: embeddedPostgresDir(config.MONITOR_DATA_DIR),
            timescaledb: config.EMBEDDED_TIMESCALEDB,
            logger: deps.createLogger(config, 'monitor-admin').child({
              component: 'embedded-postgres',
            }),
          })
        : undefined;
    try {
      const db = createDatabase({
        url: embedded?.url ?? config.DATABASE_URL ?? '',
        maxConnections: 1,
        applicationName: 'monitor-admin',
      });
      try {
        // A store this command started may never have met role `all`: give it the schema.
        if (embedded?.startedHere) await migrate(db, migrationOptions(config));
        return await fn(db, config);
      } finally {
        await db.close();
      }
    } finally {
      await embedded?.stop();
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
        const logger = deps.createLogger(config, 'monitor-migrate');
        const migrated = await migrate(db, migrationOptions(config));
        warnOfMigration(logger, migrated);
        const { mode, timescaledbVersion, applied } = migrated;
        logger.info({ mode, timescaledbVersion, applied }, 'migrated');
        // The sample shards get the same schema (their control tables stay empty).
        await migrateSampleShards(
          config,
          config.DATABASE_URL ?? '',
          migrationOptions(config),
          (shard, result) => {
            warnOfMigration(logger.child({ shard }), result);
            const { mode, timescaledbVersion, applied } = result;
            logger.info({ shard, mode, timescaledbVersion, applied }, 'migrated the shard');
          },
        );
      }),
    );

  const storage = new Command('storage').description('the storage engine of the database');
  storage
    .command('convert-to-timescaledb')
    .description(
      'move a database made with plain PostgreSQL storage onto TimescaleDB (one transaction; ' +
        'every row is copied); stop the writers first',
    )
    .action(() =>
      withDatabase(async (db, config) => {
        const logger = deps.createLogger(config, 'monitor-storage');
        const copied = await convertToTimescale(db);
        const { mode, timescaledbVersion } = await migrate(db, {
          ...migrationOptions(config),
          mode: 'timescale',
        });
        print({ mode, timescaledbVersion, copied });
        logger.info({ copied }, 'converted to TimescaleDB');
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

  const rules = new Command('rules').description('Prometheus rule files');
  rules
    .command('load')
    .argument('<files...>', 'Prometheus rule files, as `promtool check rules` takes them')
    .option('--namespace <name>', "the ruler API namespace (default: each file's base name)")
    .option('--org <id>', 'organization id (org_…); default: the bootstrap organization')
    .description(
      'check rule files as promtool does and store their groups, replacing groups of the same ' +
        'name in the namespace; nothing is stored unless every file is valid',
    )
    .action((files: string[], options: { namespace?: string; org?: string }) =>
      withDatabase(async (db, config) => {
        const loaded = [];
        for (const file of files) {
          const text = await readFile(file, 'utf8');
          const parsed = parseRuleFile(text);
          if (!parsed.ok) throw new Error(`${file}: ${parsed.errors.join(`\n${file}: `)}`);
          // Each group is stored as its own YAML, as the ruler API receives one.
          const raw = (parseYaml(text) as { groups?: unknown[] } | null)?.groups ?? [];
          const namespace = options.namespace ?? parsePath(file).name;
          loaded.push(
            ...parsed.groups.map((group, i) => ({
              namespace,
              group: {
                name: group.name,
                definition: stringifyYaml(raw[i]),
                ruleCount: group.rules.length,
                ...ruleGroupKeys(group),
              },
            })),
          );
        }
        const orgs = createOrgStore(db);
        const org =
          options.org === undefined
            ? await orgs.ensureDefaultOrganization()
            : await orgs.getOrganization(options.org);
        if (org === undefined) throw new Error(`organization ${options.org} does not exist`);
        const store = createRuleGroupStore(db);
        for (const { namespace, group } of loaded) {
          if (!(await store.putGroup(org.id, namespace, group, config.RULES_MAX_PER_ORG))) {
            throw new Error(
              `${namespace}/${group.name}: per-tenant rules limit (limit: ${config.RULES_MAX_PER_ORG}) exceeded`,
            );
          }
        }
        print({
          orgId: org.id,
          groups: loaded.map(({ namespace, group }) => ({
            namespace,
            name: group.name,
            rules: group.ruleCount,
          })),
        });
      }),
    );

  const shards = createShardsCommand({
    withDatabase,
    print,
    createLogger: deps.createLogger,
    openBus: (config, logger) => {
      if (config.KAFKA_BROKERS === undefined) {
        throw new Error(
          "moving a partition with stored samples needs the deployment's Kafka (KAFKA_BROKERS): " +
            'its marker record goes through the samples topic',
        );
      }
      return createKafkaBus({
        brokers: [...config.KAFKA_BROKERS],
        clientId: config.KAFKA_CLIENT_ID,
        logger: logger.child({ component: 'kafka' }),
      });
    },
  });

  return [migrateCommand, storage, orgs, keys, rules, shards];
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
