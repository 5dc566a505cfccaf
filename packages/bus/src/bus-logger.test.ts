import { createLogger } from '@monitor/platform';
import { describe, expect, it } from 'vitest';
import type { BusLogger } from './bus-logger.js';
import { silentBusLogger } from './bus-logger.js';

describe('BusLogger', () => {
  it('accepts the platform (pino) logger as it is', () => {
    const logger: BusLogger = createLogger({ level: 'silent' });
    expect(logger.child({ component: 'bus' }).isLevelEnabled?.('debug')).toBe(false);
  });

  it('has a silent default whose children are silent too', () => {
    expect(silentBusLogger.child({}).isLevelEnabled?.('error')).toBe(false);
  });
});
