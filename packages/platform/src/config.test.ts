import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  ConfigError,
  baseConfigSchema,
  envBoolean,
  envList,
  envNonNegativeInt,
  envPort,
  envPositiveInt,
  envString,
  envUrl,
  parseConfig,
} from './config.js';

function configError(run: () => unknown): ConfigError {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

describe('parseConfig', () => {
  it('applies the contract defaults to an empty environment', () => {
    const config = parseConfig(baseConfigSchema, {});
    expect(config).toEqual({
      PORT: 8080,
      INGEST_RATE_LIMIT_PER_MINUTE: 6000,
      SERVICE_STALE_AFTER_SECONDS: 300,
      LOG_LEVEL: 'info',
    });
  });

  it('parses every shared variable', () => {
    const config = parseConfig(baseConfigSchema, {
      PORT: '3000',
      DATABASE_URL: 'postgres://monitor:pw@db:5432/monitor',
      KAFKA_BROKERS: 'kafka-1:9092, kafka-2:9092,[::1]:9093',
      REDIS_URL: 'redis://cache:6379',
      MONITOR_BOOTSTRAP_API_KEY: 'demo-key',
      INGEST_RATE_LIMIT_PER_MINUTE: '120',
      SERVICE_STALE_AFTER_SECONDS: '60',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
      UNRELATED: 'ignored',
    });
    expect(config).toEqual({
      PORT: 3000,
      DATABASE_URL: 'postgres://monitor:pw@db:5432/monitor',
      KAFKA_BROKERS: ['kafka-1:9092', 'kafka-2:9092', '[::1]:9093'],
      REDIS_URL: 'redis://cache:6379',
      MONITOR_BOOTSTRAP_API_KEY: 'demo-key',
      INGEST_RATE_LIMIT_PER_MINUTE: 120,
      SERVICE_STALE_AFTER_SECONDS: 60,
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
    });
  });

  it('takes a DATABASE_URL with several hosts, libpq style, and refuses a malformed one', () => {
    for (const url of [
      'postgres://monitor:pw@db-1:5432,db-2:5432/monitor?target_session_attrs=read-write',
      'postgresql://db-1,db-2,db-3/monitor',
      'postgres://monitor@[::1]:5432,10.0.0.2:5433/monitor',
      'postgres:///monitor?host=/run/postgresql',
    ]) {
      expect(parseConfig(baseConfigSchema, { DATABASE_URL: url }).DATABASE_URL).toBe(url);
    }
    for (const url of [
      'postgres://db-1,,db-2/monitor',
      'postgres://db-1:5432,db 2:5432/monitor',
      'postgres://db-1:99999999,db-2/monitor',
      'mysql://db-1,db-2/monitor',
    ]) {
      expect(() => parseConfig(baseConfigSchema, { DATABASE_URL: url }), url).toThrow(
        /DATABASE_URL/,
      );
    }
  });

  it('takes LOG_FORMAT json or pretty and names it when it is anything else', () => {
    expect(parseConfig(baseConfigSchema, { LOG_FORMAT: 'json' }).LOG_FORMAT).toBe('json');
    expect(parseConfig(baseConfigSchema, {}).LOG_FORMAT).toBeUndefined();
    expect(configError(() => parseConfig(baseConfigSchema, { LOG_FORMAT: 'text' })).issues).toEqual(
      [{ variable: 'LOG_FORMAT', message: 'must be one of json, pretty' }],
    );
  });

  it('returns a deeply frozen object', () => {
    const config = parseConfig(baseConfigSchema, { KAFKA_BROKERS: 'a:1,b:2' });
    expect(Object.isFrozen(config)).toBe(true);
    expect(Object.isFrozen(config.KAFKA_BROKERS)).toBe(true);
  });

  it('treats an empty variable as unset', () => {
    const config = parseConfig(baseConfigSchema, { PORT: '', DATABASE_URL: '' });
    expect(config.PORT).toBe(8080);
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it('names every bad variable with its reason', () => {
    const error = configError(() =>
      parseConfig(baseConfigSchema, {
        PORT: '70000',
        DATABASE_URL: 'mysql://db/x',
        KAFKA_BROKERS: 'kafka-1:9092,kafka-2',
        LOG_LEVEL: 'verbose',
        INGEST_RATE_LIMIT_PER_MINUTE: '0',
        SERVICE_STALE_AFTER_SECONDS: '1.5',
      }),
    );
    expect(error.issues).toEqual([
      { variable: 'PORT', message: 'must be an integer from 1 to 65535' },
      {
        variable: 'DATABASE_URL',
        message:
          'must be a URL with scheme postgres:// or postgresql://, with one host or several (h1:5432,h2:5432)',
      },
      { variable: 'KAFKA_BROKERS', message: 'entry 2 must be host:port' },
      { variable: 'INGEST_RATE_LIMIT_PER_MINUTE', message: 'must be a positive integer' },
      { variable: 'SERVICE_STALE_AFTER_SECONDS', message: 'must be a positive integer' },
      {
        variable: 'LOG_LEVEL',
        message: 'must be one of fatal, error, warn, info, debug, trace, silent',
      },
    ]);
    expect(error.message).toContain('invalid configuration (6 variables):');
    expect(error.message).toContain('\n  PORT: must be an integer from 1 to 65535');
  });

  it('says a required variable is not set', () => {
    const schema = baseConfigSchema.extend({
      DATABASE_URL: envUrl({ protocols: ['postgres', 'postgresql'] }),
      API_TOKEN: envString(),
    });
    const error = configError(() => parseConfig(schema, {}));
    expect(error.issues).toEqual([
      { variable: 'DATABASE_URL', message: 'is required but not set' },
      { variable: 'API_TOKEN', message: 'is required but not set' },
    ]);
  });

  it('never puts a value in the message, even a secret one', () => {
    const secret = 'hunter2-s3cr3t-value';
    const error = configError(() =>
      parseConfig(
        baseConfigSchema.extend({
          DATABASE_URL: envUrl({ protocols: ['postgres'] }),
          FLAG: envBoolean(),
          LIST: envList({ item: z.string().length(3) }),
        }),
        {
          PORT: secret,
          DATABASE_URL: `mysql://admin:${secret}@db/x`,
          KAFKA_BROKERS: secret,
          REDIS_URL: secret,
          LOG_LEVEL: secret,
          INGEST_RATE_LIMIT_PER_MINUTE: secret,
          FLAG: secret,
          LIST: secret,
        },
      ),
    );
    expect(error.issues).toHaveLength(8);
    expect(error.message).not.toContain('hunter2');
    expect(JSON.stringify(error.issues)).not.toContain('hunter2');
  });

  it('never echoes an invalid value, whatever it is', () => {
    // The leading § makes every value invalid for all three fields and appears in no message.
    const schema = z.object({ PORT: envPort(), FLAG: envBoolean(), URL: envUrl() });
    fc.assert(
      fc.property(
        fc.string().map((s) => `§${s}`),
        (value) => {
          const error = configError(() =>
            parseConfig(schema, { PORT: value, FLAG: value, URL: value }),
          );
          for (const issue of error.issues) expect(issue.message).not.toContain(value);
        },
      ),
    );
  });

  it('accepts extra checks of a role on top of the base fields', () => {
    const schema = baseConfigSchema.extend({ BATCH_MAX_ROWS: envPositiveInt().default(5000) });
    const config = parseConfig(schema, { BATCH_MAX_ROWS: '200' });
    const rows: number = config.BATCH_MAX_ROWS;
    expect(rows).toBe(200);
  });
});

describe('envBoolean', () => {
  const schema = z.object({ FLAG: envBoolean().default(false) });

  it.each([
    ['true', true],
    ['1', true],
    ['false', false],
    ['0', false],
  ])('reads %s as %s', (value, expected) => {
    expect(parseConfig(schema, { FLAG: value }).FLAG).toBe(expected);
  });

  it('falls back to the default when unset', () => {
    expect(parseConfig(schema, {}).FLAG).toBe(false);
  });

  it.each(['yes', 'no', 'TRUE', 'False', 'on', ' true'])('rejects %j', (value) => {
    const error = configError(() => parseConfig(schema, { FLAG: value }));
    expect(error.issues).toEqual([{ variable: 'FLAG', message: 'must be true, false, 1 or 0' }]);
  });
});

describe('envPort', () => {
  const schema = z.object({ PORT: envPort() });

  it.each(['1', '8080', '65535'])('accepts %s', (value) => {
    expect(parseConfig(schema, { PORT: value }).PORT).toBe(Number(value));
  });

  it.each(['0', '65536', '-1', '80.5', 'http', 'NaN'])('rejects %s', (value) => {
    expect(() => parseConfig(schema, { PORT: value })).toThrow(ConfigError);
  });
});

describe('envNonNegativeInt', () => {
  it('accepts zero and rejects negatives', () => {
    const schema = z.object({ N: envNonNegativeInt() });
    expect(parseConfig(schema, { N: '0' }).N).toBe(0);
    expect(() => parseConfig(schema, { N: '-1' })).toThrow(ConfigError);
  });
});

describe('envList', () => {
  const schema = z.object({ LIST: envList() });

  it('trims entries and drops empty ones', () => {
    expect(parseConfig(schema, { LIST: ' a , b,,c, ' }).LIST).toEqual(['a', 'b', 'c']);
  });

  it('rejects a list without entries', () => {
    const error = configError(() => parseConfig(schema, { LIST: ' , ' }));
    expect(error.issues).toEqual([
      { variable: 'LIST', message: 'must list at least 1 comma-separated entry' },
    ]);
  });
});

describe('envUrl', () => {
  it('accepts any absolute URL without a scheme restriction', () => {
    const schema = z.object({ URL: envUrl() });
    expect(parseConfig(schema, { URL: 'https://example.com/x' }).URL).toBe('https://example.com/x');
    expect(() => parseConfig(schema, { URL: '/relative' })).toThrow(ConfigError);
  });

  it('accepts rediss:// for REDIS_URL', () => {
    expect(parseConfig(baseConfigSchema, { REDIS_URL: 'rediss://cache:6380' }).REDIS_URL).toBe(
      'rediss://cache:6380',
    );
  });
});
