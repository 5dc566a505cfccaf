import type { CreateLoggerOptions, Logger } from '../logger.js';
import { createLogger } from '../logger.js';

/** A logger whose JSON lines stay in memory, for tests that assert on what was logged. */
export type MemoryLogger = {
  logger: Logger;
  /** Every line written so far, parsed. */
  lines: () => Record<string, unknown>[];
  /** Everything written so far, as written. */
  text: () => string;
};

/**
 * The process logger (JSON lines, redaction and all) writing into memory; `level` is `debug`
 * unless given. Tests of other packages import it through `@monitor/testkit/builders`.
 */
export function createMemoryLogger(
  options: Partial<Omit<CreateLoggerOptions, 'destination'>> = {},
): MemoryLogger {
  const chunks: string[] = [];
  const logger = createLogger({
    ...options,
    level: options.level ?? 'debug',
    destination: { write: (chunk) => chunks.push(chunk) },
  });
  const text = (): string => chunks.join('');
  const lines = (): Record<string, unknown>[] =>
    text()
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, text };
}
