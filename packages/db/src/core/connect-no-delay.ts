import net from 'node:net';

/** The parts of postgres.js's parsed options that say where the server is. */
export type SocketTarget = {
  host: readonly string[];
  port: readonly number[];
  /** A Unix-domain socket path, when the URL named a directory as host. */
  path?: string | false | undefined;
};

/**
 * A postgres.js `socket` option: connects like postgres.js itself would (each configured host in
 * turn, or the Unix socket path) and hands over the socket only once it is connected, with
 * `setNoDelay(true)`. postgres.js then runs TLS negotiation and the startup on it as usual.
 *
 * With a custom socket postgres.js starts its connect timer only after the socket is handed over,
 * so this function bounds the TCP connect itself with `connectTimeoutMs`.
 */
export function connectNoDelay(
  connectTimeoutMs: number,
): (target: SocketTarget) => Promise<net.Socket> {
  let nextHost = 0;
  return async (target) => {
    if (typeof target.path === 'string' && target.path !== '') {
      return await connectOnce({ path: target.path }, connectTimeoutMs);
    }
    const count = Math.max(target.host.length, 1);
    const start = nextHost++ % count;
    let lastError: unknown;
    for (let i = 0; i < count; i++) {
      const index = (start + i) % count;
      const host = target.host[index] ?? 'localhost';
      const port = target.port[index] ?? target.port[0] ?? 5432;
      try {
        const socket = await connectOnce({ host, port }, connectTimeoutMs);
        socket.setNoDelay(true);
        // postgres.js reads these for TLS SNI and in error messages.
        Object.assign(socket, { host, port });
        return socket;
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  };
}

function connectOnce(
  where: { host: string; port: number } | { path: string },
  timeoutMs: number,
): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(where);
    const timer = setTimeout(() => {
      socket.destroy();
      const target = 'path' in where ? where.path : `${where.host}:${where.port}`;
      reject(Object.assign(new Error(`connect to ${target} timed out`), { code: 'ETIMEDOUT' }));
    }, timeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      socket.removeListener('error', onError);
      resolve(socket);
    });
    function onError(err: Error): void {
      clearTimeout(timer);
      reject(err);
    }
    socket.once('error', onError);
  });
}
