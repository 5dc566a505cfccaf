import { ConfigError, parseConfig } from '@monitor/platform';
import { describe, expect, it } from 'vitest';
import type { Role } from './config.js';
import {
  adminConfigSchema,
  allConfigSchema,
  migrationOptions,
  parseRoleConfig,
  roles,
  sliceOf,
  writerSliceFields,
} from './config.js';

const databaseUrl = 'postgres://monitor:secret@db:5432/monitor';
const brokers = 'kafka-1:9092,kafka-2:9092';

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

function variables(err: ConfigError): string[] {
  return err.issues.map((issue) => issue.variable);
}

const busRoles: Role[] = ['gateway', 'writer', 'evaluator'];
const databaseRoles: Role[] = ['api', 'notifier', 'investigator'];

describe('parseRoleConfig', () => {
  it.each([
    ['not json', 'must be a JSON list of shards'],
    ['{"name":"s0"}', 'must be a JSON list of `{ "name", "url", "read_url"? }`'],
    ['[]', 'must name at least one shard'],
    [`[{"name":"S 0","url":"${databaseUrl}"}]`, 'must be 1–63 lowercase letters'],
    ['[{"name":"s0","url":"http://db"}]', 'must be a URL with scheme postgres://'],
    [
      `[{"name":"s0","url":"${databaseUrl}"},{"name":"s0","url":"${databaseUrl}"}]`,
      'names each shard once',
    ],
    [`[{"name":"s0","url":"${databaseUrl}","host":"db"}]`, 'Unrecognized key'],
  ])('refuses SAMPLE_SHARDS=%s before any connection', (value, message) => {
    const err = configError(() =>
      parseRoleConfig('api', { DATABASE_URL: databaseUrl, SAMPLE_SHARDS: value }),
    );
    expect(variables(err)).toContain('SAMPLE_SHARDS');
    expect(err.issues.map((issue) => issue.message).join('\n')).toContain(message);
  });

  it('takes a valid SAMPLE_SHARDS in every role that stores or reads samples, and the commands', () => {
    const listed = [
      { name: 's0', url: databaseUrl },
      {
        name: 's1',
        url: 'postgres://monitor:secret@db-1:5432,db-2:5432/monitor',
        read_url: databaseUrl,
      },
    ];
    for (const role of ['writer', 'api', 'evaluator', 'investigator', 'all'] as const) {
      const start = parseRoleConfig(role, {
        DATABASE_URL: databaseUrl,
        KAFKA_BROKERS: brokers,
        SAMPLE_SHARDS: JSON.stringify(listed),
      });
      expect(start.config, role).toMatchObject({ SAMPLE_SHARDS: listed });
    }
  });

  it.each(busRoles)('%s requires KAFKA_BROKERS, naming it', (role) => {
    const err = configError(() => parseRoleConfig(role, { DATABASE_URL: databaseUrl }));
    expect(err.issues).toEqual([{ variable: 'KAFKA_BROKERS', message: 'is required but not set' }]);
    expect(err.message).toContain('KAFKA_BROKERS');
  });

  it.each(databaseRoles)('%s starts without KAFKA_BROKERS and ignores a bad one', (role) => {
    expect(parseRoleConfig(role, { DATABASE_URL: databaseUrl }).role).toBe(role);
    const config = parseRoleConfig(role, { DATABASE_URL: databaseUrl, KAFKA_BROKERS: 'no port' })
      .config as Record<string, unknown>;
    expect(config).not.toHaveProperty('KAFKA_BROKERS');
  });

  it.each(roles.filter((role) => role !== 'all'))('%s requires DATABASE_URL', (role) => {
    const err = configError(() => parseRoleConfig(role, { KAFKA_BROKERS: brokers }));
    expect(variables(err)).toEqual(['DATABASE_URL']);
  });

  it('all needs neither: the embedded PostgreSQL and the in-process bus', () => {
    const start = parseRoleConfig('all', {});
    expect(start.role).toBe('all');
    expect(start.config).toMatchObject({ MONITOR_DATA_DIR: './data', PORT: 8080 });
    expect(start.config).not.toHaveProperty('DATABASE_URL');
    expect(start.config).not.toHaveProperty('KAFKA_BROKERS');
  });

  it('names every bad variable of the role, never a value', () => {
    const err = configError(() =>
      parseRoleConfig('gateway', {
        DATABASE_URL: 'mysql://user:hunter2@db/x',
        PORT: '0',
        INGEST_RATE_LIMIT_PER_MINUTE: 'many',
      }),
    );
    expect(variables(err).sort()).toEqual(
      ['DATABASE_URL', 'INGEST_RATE_LIMIT_PER_MINUTE', 'KAFKA_BROKERS', 'PORT'].sort(),
    );
    expect(err.message).not.toContain('hunter2');
    expect(err.message).not.toContain('many');
  });

  it('ignores the variables of other roles, even bad ones', () => {
    const env = {
      DATABASE_URL: databaseUrl,
      KAFKA_BROKERS: brokers,
      WRITER_CONSUMERS: 'zero',
      NOTIFIER_ALLOWED_TARGET_NETWORKS: 'not a network',
      LLM_BASE_URL: 'ftp://llm',
      REDIS_URL: 'http://not-redis',
    };
    const gateway = parseRoleConfig('gateway', { ...env, REDIS_URL: undefined });
    expect(gateway.config).not.toHaveProperty('WRITER_CONSUMERS');
    expect(gateway.config).not.toHaveProperty('LLM_MODEL');
    expect(variables(configError(() => parseRoleConfig('gateway', env)))).toEqual(['REDIS_URL']);

    const writer = parseRoleConfig('writer', { ...env, WRITER_CONSUMERS: '3' });
    expect(writer.config).toMatchObject({ WRITER_CONSUMERS: 3, KAFKA_BROKERS: brokers.split(',') });
    expect(writer.config).not.toHaveProperty('REDIS_URL');
    expect(variables(configError(() => parseRoleConfig('writer', env)))).toEqual([
      'WRITER_CONSUMERS',
    ]);

    expect(
      variables(configError(() => parseRoleConfig('api', env))).concat(
        variables(configError(() => parseRoleConfig('notifier', env))),
      ),
    ).toEqual([
      'NOTIFIER_ALLOWED_TARGET_NETWORKS',
      'REDIS_URL',
      'NOTIFIER_ALLOWED_TARGET_NETWORKS',
    ]);
    expect(variables(configError(() => parseRoleConfig('investigator', env)))).toEqual([
      'LLM_BASE_URL',
    ]);
    expect(parseRoleConfig('evaluator', env).config).not.toHaveProperty('SMTP_URL');
  });

  it.each(['writer', 'evaluator', 'all'] as const)(
    '%s refuses a Kafka heartbeat interval not below the session timeout, naming it',
    (role) => {
      const env = {
        DATABASE_URL: databaseUrl,
        KAFKA_BROKERS: brokers,
        KAFKA_SESSION_TIMEOUT_MS: '6000',
        KAFKA_HEARTBEAT_INTERVAL_MS: '6000',
      };
      expect(variables(configError(() => parseRoleConfig(role, env)))).toEqual([
        'KAFKA_HEARTBEAT_INTERVAL_MS',
      ]);
      const shorter = { ...env, KAFKA_HEARTBEAT_INTERVAL_MS: '2000' };
      expect(parseRoleConfig(role, shorter).config).toMatchObject({
        KAFKA_HEARTBEAT_INTERVAL_MS: 2_000,
      });
    },
  );

  it('keeps the defaults', () => {
    expect(parseConfig(allConfigSchema, {})).toMatchObject({
      PORT: 8080,
      LOG_LEVEL: 'info',
      SHUTDOWN_TIMEOUT_MS: 25_000,
      DATABASE_POOL_MAX: 10,
      SAMPLES_TOPIC: 'metrics.samples.v1',
      SAMPLES_TOPIC_PARTITIONS: 6,
      KAFKA_CLIENT_ID: 'monitor',
      KAFKA_SESSION_TIMEOUT_MS: 6_000,
      KAFKA_HEARTBEAT_INTERVAL_MS: 1_000,
      INGEST_RATE_LIMIT_PER_MINUTE: 6000,
      INGEST_BUS_ENCODING: 'binary',
      RAW_RETENTION_DAYS: 30,
      ALERT_RETENTION_DAYS: 90,
      STORAGE_MOVE_BATCHES_PER_RUN: 4,
      CONSUMERS_SEMI_SPACE_MB: 16,
      HEAP_GROWING_PERCENT: 60,
      WRITER_CONSUMERS: 2,
      EVALUATOR_RULE_POLL_MS: 1_000,
      NOTIFIER_ALLOWED_TARGET_NETWORKS: [],
      SERVICE_STALE_AFTER_SECONDS: 300,
      LLM_MODEL: 'gpt-4o-mini',
      MONITOR_DATA_DIR: './data',
    });
  });

  it('lets the gateway publish JSON for older consumers, and nothing else', () => {
    const env = { DATABASE_URL: databaseUrl, KAFKA_BROKERS: brokers };
    const json = parseRoleConfig('gateway', { ...env, INGEST_BUS_ENCODING: 'json' });
    expect(json.config).toMatchObject({ INGEST_BUS_ENCODING: 'json' });
    expect(
      variables(
        configError(() => parseRoleConfig('gateway', { ...env, INGEST_BUS_ENCODING: 'xml' })),
      ),
    ).toEqual(['INGEST_BUS_ENCODING']);
  });
});

describe('adminConfigSchema', () => {
  it('reads the database and migration settings, the samples topic, its Kafka and the rules limit, only', () => {
    const config = parseConfig(adminConfigSchema, { INGEST_BUS_ENCODING: 'xml', PORT: 'x' });
    // Unset optional settings are left out.
    expect(Object.keys(config).sort()).toEqual(
      [
        'EMBEDDED_TIMESCALEDB',
        'EXEMPLAR_RETENTION_DAYS',
        'KAFKA_CLIENT_ID',
        'LOG_LEVEL',
        'MONITOR_DATA_DIR',
        'PROMQL_CACHE_SETTLED_MS',
        'RAW_RETENTION_DAYS',
        'ROLLUP_1H_RETENTION_DAYS',
        'ROLLUP_1M_RETENTION_DAYS',
        'RULES_MAX_PER_ORG',
        'SAMPLES_TOPIC',
        'SAMPLES_TOPIC_PARTITIONS',
        'SNAPSHOT_RETENTION_DAYS',
        'STORAGE_MODE',
      ].sort(),
    );
    // `monitor shards move` publishes its marker through the deployment's Kafka.
    expect(() => parseConfig(adminConfigSchema, { KAFKA_BROKERS: 'bad' })).toThrow(/KAFKA_BROKERS/);
  });

  it('takes COMPRESS_AFTER_DAYS as days when COMPRESS_AFTER_HOURS is unset, and hours first', () => {
    const days = parseConfig(adminConfigSchema, { COMPRESS_AFTER_DAYS: '3' });
    expect(migrationOptions(days)).toMatchObject({ compressAfterHours: 72, mode: 'auto' });
    const both = parseConfig(adminConfigSchema, {
      COMPRESS_AFTER_DAYS: '3',
      COMPRESS_AFTER_HOURS: '6',
      STORAGE_MODE: 'timescale',
    });
    expect(migrationOptions(both)).toMatchObject({ compressAfterHours: 6, mode: 'timescale' });
    expect(() => parseConfig(adminConfigSchema, { STORAGE_MODE: 'timescaledb' })).toThrow(
      /STORAGE_MODE/,
    );
  });
});

describe('sliceOf', () => {
  it('hands a component only the variables of its group', () => {
    const config = parseConfig(allConfigSchema, {});
    const slice = sliceOf(writerSliceFields, config);
    expect(Object.keys(slice).sort()).toEqual(
      Object.keys(writerSliceFields)
        // Unset, so left out: the in-process bus, and the writer's wait that depends on it.
        .filter((name) => name !== 'KAFKA_BROKERS' && name !== 'WRITER_BATCH_MAX_WAIT_MS')
        .sort(),
    );
    expect(Object.isFrozen(slice)).toBe(true);
  });
});
