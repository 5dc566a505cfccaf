import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AppError } from '@monitor/platform';
import { sendProblem } from '@monitor/platform';

/**
 * How much of a refused request's body is read and dropped before the refusal is sent, like
 * nginx's lingering close: enough for any body a sender means to send (the ingest limit is 1 MiB
 * by default), not enough to be a way of tying a connection up.
 */
const drainLimits = { maxBytes: 8 * 1024 * 1024, maxMs: 5_000 };

/**
 * Sends `err` as a problem with `Connection: close`, once what is left of the request body has
 * been read and dropped (at most `drainLimits`). Closing while the sender is still sending makes
 * the kernel reset the connection, and the refusal goes with it: a client sees a reset instead of
 * its 401, 413 or 415, and a proxy in front (the compose edge's nginx) answers 502 in its place.
 * Past the limits the refusal is sent anyway: a sender of endless data loses its answer, not our
 * time. Resolves with the status sent.
 */
export async function refuseAfterDrain(
  req: IncomingMessage,
  res: ServerResponse,
  err: AppError,
): Promise<number> {
  await drainRequest(req);
  res.setHeader('Connection', 'close');
  return sendProblem(res, err).status;
}

function drainRequest(req: IncomingMessage): Promise<void> {
  if (req.readableEnded || req.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    let seen = 0;
    const done = (): void => {
      clearTimeout(timer);
      req.off('data', count);
      req.off('end', done);
      req.off('close', done);
      resolve();
    };
    const count = (chunk: Buffer): void => {
      seen += chunk.length;
      if (seen > drainLimits.maxBytes) done();
    };
    const timer = setTimeout(done, drainLimits.maxMs);
    req.on('data', count);
    req.once('end', done);
    req.once('close', done);
    req.resume();
  });
}
