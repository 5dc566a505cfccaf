import net from 'node:net';

/** The parts of postgres.js's parsed options that say where the server is. */
export type SocketTarget = {
  host: readonly string[];
  port: readonly number[];
  /** A Unix-domain socket path, when the URL named a directory as host. */
  path?: string | false | undefined;
};

/**
 * A postgres.js `socket` option: connects to the host postgres.js asks for (the index of the next
 * one in turn, from our patch of it: patches/postgres+3.4.9.patch), or the Unix socket path, and
 * hands over the socket only once it is connected, with `setNoDelay(true)`. postgres.js then runs
 * TLS negotiation and the startup on it as usual, and moves on to the next host when this one
 * fails or is not of the kind `target_session_attrs` asks for.
 *
 * With a custom socket postgres.js starts its connect timer only after the socket is handed over,
 * so this function bounds the TCP connect itself with `connectTimeoutMs`.
 */
export function connectNoDelay(
  connectTimeoutMs: number,
): (target: SocketTarget, hostIndex: number) => Promise<net.Socket> {
  return async (target, hostIndex) => {
    if (typeof target.path === 'string' && target.path !== '') {
      return await connectOnce({ path: target.path }, connectTimeoutMs);
    }
    const host = target.host[hostIndex] ?? target.host[0] ?? 'localhost';
    const port = target.port[hostIndex] ?? target.port[0] ?? 5432;
    const socket = await connectOnce({ host, port }, connectTimeoutMs);
    socket.setNoDelay(true);
    // postgres.js reads these for TLS SNI and in error messages.
    Object.assign(socket, { host, port });
    return socket;
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
