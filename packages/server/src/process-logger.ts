import type { Logger } from '@monitor/platform';
import { createLogger } from '@monitor/platform';
import type { ServerConfig } from './config.js';

/**
 * The process logger on stdout: LOG_FORMAT when set, else `pretty` for a person at a terminal
 * and `json` for everything else (a pipe, a file, a container's log driver), so what machines
 * read never depends on a setting someone forgot.
 */
export function createProcessLogger(
  config: Pick<ServerConfig, 'LOG_LEVEL' | 'LOG_FORMAT'>,
  name: string,
): Logger {
  return createLogger({
    level: config.LOG_LEVEL,
    name,
    format: config.LOG_FORMAT ?? (process.stdout.isTTY ? 'pretty' : 'json'),
  });
}
