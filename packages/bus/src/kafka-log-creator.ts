import type { LogEntry, logCreator } from 'kafkajs';
import { logLevel } from 'kafkajs';
import type { BusLogger } from './bus-logger.js';

type Level = 'warn' | 'debug' | 'trace';

/**
 * Messages kafkajs logs louder than they deserve here. The idempotent producer's warning about
 * limited retries is a choice we made on purpose: bounded retries keep a publish within its
 * deadline, and a producer is never reused after a failure (see kafka-batch-sender.ts).
 */
const quietMessages: ReadonlySet<string> = new Set([
  'Limiting retries for the idempotent producer may invalidate EoS guarantees',
]);

/**
 * kafkajs level → ours. kafkajs logs ERROR for conditions it heals itself (a lost connection, a
 * consumer restart), which our rules call WARN; the bus logs its own ERROR where a human must act.
 * Its INFO is chatty (every join, every start): debug. Its DEBUG: trace.
 */
function busLevelFor(level: logLevel): Level | undefined {
  switch (level) {
    case logLevel.ERROR:
    case logLevel.WARN:
      return 'warn';
    case logLevel.INFO:
      return 'debug';
    case logLevel.DEBUG:
      return 'trace';
    default:
      return undefined;
  }
}

/**
 * The most detailed kafkajs level worth producing for `logger`: entries below what the logger
 * prints are never formatted. Without `isLevelEnabled`, INFO (our debug).
 */
export function kafkaLogLevelFor(logger: BusLogger): logLevel {
  if (logger.isLevelEnabled === undefined) return logLevel.INFO;
  if (logger.isLevelEnabled('trace')) return logLevel.DEBUG;
  if (logger.isLevelEnabled('debug')) return logLevel.INFO;
  if (logger.isLevelEnabled('warn')) return logLevel.WARN;
  return logLevel.NOTHING;
}

/** Routes kafkajs log entries into `logger` (a child with `bus: 'kafkajs'`). */
export function createKafkaLogCreator(logger: BusLogger): logCreator {
  const kafkaLogger = logger.child({ bus: 'kafkajs' });
  return () =>
    ({ namespace, level, log }: LogEntry) => {
      const { message, ...fields }: Record<string, unknown> & { message: string } = { ...log };
      // Our logger stamps its own time and name.
      delete fields['timestamp'];
      delete fields['logger'];
      const target = quietMessages.has(message) ? 'debug' : busLevelFor(level);
      if (target === undefined) return;
      kafkaLogger[target]({ namespace, ...fields }, message);
    };
}
