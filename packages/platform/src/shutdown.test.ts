import { once } from 'node:events';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { closeHttpServer, createShutdown } from './shutdown.js';
import { createMemoryLogger } from './testing/memory-logger.js';

const tick = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('createShutdown', () => {
  it('runs hooks one at a time in reverse registration order', async () => {
    const { logger } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 1000 });
    const events: string[] = [];
    for (const name of ['database', 'consumer', 'http']) {
      shutdown.onShutdown(name, async () => {
        events.push(`${name} start`);
        await tick();
        events.push(`${name} end`);
      });
    }
    const result = await shutdown.shutdown('SIGTERM');
    expect(events).toEqual([
      'http start',
      'http end',
      'consumer start',
      'consumer end',
      'database start',
      'database end',
    ]);
    expect(result).toEqual({ ok: true, timedOut: false, failed: [], pending: [] });
  });

  it('logs a failing hook and still runs the rest', async () => {
    const { logger, lines } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 1000 });
    const ran: string[] = [];
    shutdown.onShutdown('database', () => {
      ran.push('database');
    });
    shutdown.onShutdown('producer', () => Promise.reject(new Error('flush failed')));
    shutdown.onShutdown('http', () => {
      throw new Error('close failed');
    });
    const result = await shutdown.shutdown();
    expect(ran).toEqual(['database']);
    expect(result).toEqual({
      ok: false,
      timedOut: false,
      failed: ['http', 'producer'],
      pending: [],
    });
    const failures = lines().filter((line) => line.msg === 'shutdown hook failed');
    expect(failures).toMatchObject([
      { level: 'error', hook: 'http', err: { message: 'close failed' } },
      { level: 'error', hook: 'producer', err: { message: 'flush failed' } },
    ]);
  });

  it('gives up at the deadline and reports what did not finish', async () => {
    const { logger, lines } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 30 });
    const ran: string[] = [];
    shutdown.onShutdown('database', () => {
      ran.push('database');
    });
    shutdown.onShutdown('consumer', () => new Promise<void>(() => {}));
    shutdown.onShutdown('http', () => {
      ran.push('http');
    });
    const result = await shutdown.shutdown();
    expect(result).toEqual({
      ok: false,
      timedOut: true,
      failed: [],
      pending: ['consumer', 'database'],
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(ran).toEqual(['http']);
    expect(lines()).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'shutdown timed out', timeoutMs: 30 }),
    );
  });

  it('returns the same promise on every call and runs each hook once', async () => {
    const { logger } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 1000 });
    let runs = 0;
    shutdown.onShutdown('http', () => {
      runs += 1;
    });
    const first = shutdown.shutdown('SIGTERM');
    const second = shutdown.shutdown('SIGINT');
    expect(second).toBe(first);
    await first;
    expect(shutdown.shutdown()).toBe(first);
    expect(runs).toBe(1);
  });

  it('signals the start of shutdown and refuses later registrations', async () => {
    const { logger } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 1000 });
    expect(shutdown.isShuttingDown).toBe(false);
    expect(shutdown.signal.aborted).toBe(false);
    const done = shutdown.shutdown();
    expect(shutdown.isShuttingDown).toBe(true);
    expect(shutdown.signal.aborted).toBe(true);
    expect(() => shutdown.onShutdown('late', () => {})).toThrow(/shutdown has begun/);
    await done;
  });

  it('gives a listener of its signal that calls shutdown() the run already begun', async () => {
    const { logger } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 1000 });
    let runs = 0;
    shutdown.onShutdown('counted', () => {
      runs++;
    });
    let fromListener: Promise<unknown> | undefined;
    shutdown.signal.addEventListener('abort', () => {
      fromListener = shutdown.shutdown('listener');
    });
    const first = shutdown.shutdown('component failed');
    expect(fromListener).toBe(first);
    await first;
    expect(runs).toBe(1);
  });

  it('skips a hook that was unregistered', async () => {
    const { logger } = createMemoryLogger();
    const shutdown = createShutdown({ logger, timeoutMs: 1000 });
    const ran: string[] = [];
    shutdown.onShutdown('kept', () => {
      ran.push('kept');
    });
    const unregister = shutdown.onShutdown('dropped', () => {
      ran.push('dropped');
    });
    unregister();
    await shutdown.shutdown();
    expect(ran).toEqual(['kept']);
  });
});

describe('closeHttpServer', () => {
  const servers: Server[] = [];

  afterEach(() => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      server.close();
    }
  });

  async function serve(handler: RequestListener): Promise<{ server: Server; url: string }> {
    const server = createServer(handler);
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
  }

  it('resolves at once for a server that is not listening', async () => {
    await expect(closeHttpServer(createServer(), 1000)).resolves.toBeUndefined();
  });

  it('closes idle keep-alive connections without waiting for the grace period', async () => {
    const { server, url } = await serve((_req, res) => res.end('ok'));
    const response = await fetch(url);
    expect(await response.text()).toBe('ok');
    const startedAt = Date.now();
    await closeHttpServer(server, 10_000);
    expect(Date.now() - startedAt).toBeLessThan(1000);
    expect(server.listening).toBe(false);
  });

  it('lets an in-flight request finish before closing', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const { server, url } = await serve((_req, res) => {
      entered();
      void released.then(() => res.end('finished'));
    });
    const pendingResponse = fetch(url);
    await inHandler;
    const closing = closeHttpServer(server, 10_000);
    const startedAt = Date.now();
    release();
    const response = await pendingResponse;
    expect(await response.text()).toBe('finished');
    await closing;
    expect(Date.now() - startedAt).toBeLessThan(1000);
  });

  it('cuts connections still open after the grace period', async () => {
    let entered!: () => void;
    const inHandler = new Promise<void>((resolve) => (entered = resolve));
    const { server, url } = await serve(() => {
      entered();
    });
    const pendingResponse = fetch(url).then(
      () => 'answered',
      () => 'cut',
    );
    await inHandler;
    const startedAt = Date.now();
    await closeHttpServer(server, 50);
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(45);
    expect(await pendingResponse).toBe('cut');
  });
});
