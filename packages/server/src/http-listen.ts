import { createServer } from 'node:http';
import type { RequestListener, Server } from 'node:http';
import { closeHttpServer } from '@monitor/platform';
import type { RoleContext } from './role-context.js';

/**
 * Listens on `port` and registers closing the server as the last-registered (so first-run)
 * shutdown hook: stop accepting, let in-flight requests finish, then everything else closes.
 */
export async function listenHttp(
  ctx: RoleContext,
  listener: RequestListener,
  port: number,
): Promise<Server> {
  const server = createServer({ keepAliveTimeout: 65_000 }, listener);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const boundPort = typeof address === 'object' && address !== null ? address.port : port;
  ctx.logger.info({ port: boundPort }, 'listening');
  ctx.shutdown.onShutdown('http server', () => closeHttpServer(server, 10_000));
  return server;
}
