/**
 * The logger the bus writes to: the subset of pino it uses, so the server's pino logger (or a
 * child of it) fits as it is, and tests can pass a fake.
 */
export interface BusLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
  trace(obj: object, msg?: string): void;
  child(bindings: Record<string, unknown>): BusLogger;
  /** pino's level check; when present, kafkajs is asked only for the levels that would print. */
  isLevelEnabled?(level: string): boolean;
}

const ignore = (): void => undefined;

/** Drops everything; the default where a logger is optional. */
export const silentBusLogger: BusLogger = {
  error: ignore,
  warn: ignore,
  info: ignore,
  debug: ignore,
  trace: ignore,
  child: () => silentBusLogger,
  isLevelEnabled: () => false,
};
