import type { Logger } from '@monitor/platform';
import { createLogger } from '@monitor/platform';
import type { AdminConfig } from './config.js';

/**
 * The process logger: LOG_FORMAT when set, else `pretty` for a person at a terminal and `json`
 * for everything else (a pipe, a file, a container's log driver), so what machines read never
 * depends on a setting someone forgot. Roles log to stdout; one-shot commands to stderr, since
 * their stdout is the result a script reads.
 */
export function createProcessLogger(
  config: Pick<AdminConfig, 'LOG_LEVEL' | 'LOG_FORMAT'>,
  name: string,
  stream: 'stdout' | 'stderr' = 'stdout',
): Logger {
  const target = stream === 'stdout' ? process.stdout : process.stderr;
  return createLogger({
    level: config.LOG_LEVEL,
    name,
    format: config.LOG_FORMAT ?? (target.isTTY ? 'pretty' : 'json'),
    // process.stderr writes synchronously on Linux (files, pipes and terminals alike).
    ...(stream === 'stderr' ? { destination: process.stderr } : {}),
  });
}
