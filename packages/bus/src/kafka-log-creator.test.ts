import { logLevel } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { BusLogger } from './bus-logger.js';
import { createKafkaLogCreator, kafkaLogLevelFor } from './kafka-log-creator.js';

type Line = { level: string; obj: object; msg: string | undefined };

function createFakeLogger(enabled: readonly string[] = []): { logger: BusLogger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (obj: object, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  const logger: BusLogger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
    trace: at('trace'),
    child: () => logger,
    isLevelEnabled: (level) => enabled.includes(level),
  };
  return { logger, lines };
}

function entry(level: logLevel, message: string, extra: Record<string, unknown> = {}) {
  return {
    namespace: 'Connection',
    level,
    label: 'X',
    log: { timestamp: '2025-01-01T00:00:00.000Z', logger: 'kafkajs', message, ...extra },
  };
}

describe('createKafkaLogCreator', () => {
  it('maps kafkajs ERROR and WARN to warn, INFO to debug, DEBUG to trace', () => {
    const { logger, lines } = createFakeLogger();
    const log = createKafkaLogCreator(logger)(logLevel.DEBUG);
    log(entry(logLevel.ERROR, 'Connection error', { broker: '127.0.0.1:9092' }));
    log(entry(logLevel.WARN, 'w'));
    log(entry(logLevel.INFO, 'i'));
    log(entry(logLevel.DEBUG, 'd'));
    expect(lines.map((line) => [line.level, line.msg])).toEqual([
      ['warn', 'Connection error'],
      ['warn', 'w'],
      ['debug', 'i'],
      ['trace', 'd'],
    ]);
    expect(lines[0]!.obj).toEqual({ namespace: 'Connection', broker: '127.0.0.1:9092' });
  });

  it('quiets the warning about the idempotent producer retries we limit on purpose', () => {
    const { logger, lines } = createFakeLogger();
    createKafkaLogCreator(logger)(logLevel.INFO)(
      entry(
        logLevel.WARN,
        'Limiting retries for the idempotent producer may invalidate EoS guarantees',
      ),
    );
    expect(lines[0]!.level).toBe('debug');
  });
});

describe('kafkaLogLevelFor', () => {
  it('asks kafkajs only for what the logger prints', () => {
    expect(kafkaLogLevelFor(createFakeLogger(['trace', 'debug', 'warn']).logger)).toBe(
      logLevel.DEBUG,
    );
    expect(kafkaLogLevelFor(createFakeLogger(['debug', 'warn']).logger)).toBe(logLevel.INFO);
    expect(kafkaLogLevelFor(createFakeLogger(['warn']).logger)).toBe(logLevel.WARN);
    expect(kafkaLogLevelFor(createFakeLogger([]).logger)).toBe(logLevel.NOTHING);
  });
});
