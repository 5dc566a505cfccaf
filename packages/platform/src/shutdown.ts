import type { Server } from 'node:http';
import type { Logger } from './logger.js';

/** Releases one component's resources; may be async. A throw is logged and the rest still run. */
type ShutdownHook = () => Promise<void> | void;

interface ShutdownResult {
  /** Every hook finished without error before the deadline. */
  readonly ok: boolean;
  readonly timedOut: boolean;
  /** Hooks that threw or rejected. */
  readonly failed: readonly string[];
  /** Hooks still running or never started when the deadline passed. */
  readonly pending: readonly string[];
}

export interface Shutdown {
  /**
   * Registers a hook. Hooks run one at a time in reverse registration order, so register in
   * start-up order (open the database, then the consumer, then the HTTP server) and the server
   * stops accepting first, in-flight work finishes, producers flush, connections close.
   * Returns a function that unregisters the hook. Throws once shutdown has begun.
   */
  onShutdown(name: string, hook: ShutdownHook): () => void;
  /**
   * Runs the hooks. Idempotent: every call returns the same promise. Never rejects; resolves
   * with `ok: false` when a hook failed or the deadline passed (hooks left then are not started).
   */
  shutdown(reason?: string): Promise<ShutdownResult>;
  /** True from the first `shutdown()` call on. */
  readonly isShuttingDown: boolean;
  /** Aborted when shutdown begins: long-running loops can watch it. */
  readonly signal: AbortSignal;
}

export interface CreateShutdownOptions {
  readonly logger: Logger;
  /** Deadline for all hooks together. */
  readonly timeoutMs: number;
}

interface Registration {
  readonly name: string;
  readonly hook: ShutdownHook;
}

/**
 * Coordinates graceful shutdown. It never touches `process`: the server package wires signals,
 * e.g. `process.on('SIGTERM', () => void shutdown.shutdown('SIGTERM').then(r => exit(r.ok ? 0 : 1)))`.
 */
export function createShutdown(options: CreateShutdownOptions): Shutdown {
  const { logger, timeoutMs } = options;
  const registrations: Registration[] = [];
  const controller = new AbortController();
  let running: Promise<ShutdownResult> | undefined;

  async function run(reason: string | undefined): Promise<ShutdownResult> {
    const startedAt = Date.now();
    const hooks = [...registrations].reverse();
    const finished = new Set<Registration>();
    const failed: string[] = [];
    let deadlinePassed = false;
    logger.info({ reason, hooks: hooks.length, timeoutMs }, 'shutdown started');

    const runHooks = async (): Promise<void> => {
      for (const registration of hooks) {
        if (deadlinePassed) return;
        const hookStartedAt = Date.now();
        try {
          await registration.hook();
          logger.info(
            { hook: registration.name, durationMs: Date.now() - hookStartedAt },
            'shutdown hook finished',
          );
        } catch (err) {
          failed.push(registration.name);
          logger.error({ hook: registration.name, err }, 'shutdown hook failed');
        }
        finished.add(registration);
      }
    };

    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), timeoutMs);
    });
    const outcome = await Promise.race([runHooks().then(() => 'done' as const), deadline]);
    clearTimeout(timer);

    const timedOut = outcome === 'timeout';
    deadlinePassed = timedOut;
    const pending = hooks.filter((r) => !finished.has(r)).map((r) => r.name);
    const result: ShutdownResult = {
      ok: !timedOut && failed.length === 0,
      timedOut,
      failed: [...failed],
      pending,
    };
    if (timedOut) {
      logger.error({ timeoutMs, pending }, 'shutdown timed out');
    }
    logger.info({ ...result, durationMs: Date.now() - startedAt }, 'shutdown finished');
    return result;
  }

  return {
    onShutdown(name, hook) {
      if (running !== undefined) {
        throw new Error(`cannot register shutdown hook "${name}": shutdown has begun`);
      }
      const registration: Registration = { name, hook };
      registrations.push(registration);
      return () => {
        const index = registrations.indexOf(registration);
        if (index !== -1) registrations.splice(index, 1);
      };
    },
    shutdown(reason) {
      if (running === undefined) {
        running = run(reason);
        // After `running` is set: a listener of the signal that calls shutdown() gets this run.
        controller.abort();
      }
      return running;
    },
    get isShuttingDown() {
      return running !== undefined;
    },
    signal: controller.signal,
  };
}

/** The parts of `http.Server` (and `https.Server`) that `closeHttpServer` uses. */
export type ClosableServer = Pick<
  Server,
  'close' | 'closeIdleConnections' | 'closeAllConnections' | 'listening'
>;

/** How often `closeHttpServer` closes connections that went idle while it waits. */
const idleSweepIntervalMs = 50;

/**
 * Stops accepting connections, lets in-flight requests finish, closes keep-alive connections as
 * soon as they are idle (node keeps a connection open after its last response until the
 * keep-alive timeout, even on a closing server), and after `graceMs` closes whatever is still
 * open. Resolves when the server has closed; at once if it was not listening.
 */
export async function closeHttpServer(server: ClosableServer, graceMs: number): Promise<void> {
  if (!server.listening) return;
  const closed = new Promise<void>((resolve, reject) => {
    server.close((err) => (err === undefined ? resolve() : reject(err)));
  });
  server.closeIdleConnections();
  const sweep = setInterval(() => server.closeIdleConnections(), idleSweepIntervalMs);
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearInterval(sweep);
    clearTimeout(cut);
  }
}
