import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

type ReceivedRequest = { headers: IncomingHttpHeaders; body: string };

/**
 * Where the receivers below listen, for NOTIFIER_ALLOWED_TARGET_NETWORKS: the notifier refuses
 * loopback targets unless they are allowed.
 */
export const receiverNetworks = '127.0.0.1/32';

export type HttpReceiver = {
  readonly url: string;
  /** Requests answered 2xx, in arrival order. */
  readonly accepted: ReceivedRequest[];
  /** Every request, including those answered with a failure. */
  readonly all: ReceivedRequest[];
  close(): Promise<void>;
};

/**
 * A local HTTP endpoint standing in for Slack's incoming webhook or a customer's webhook: it
 * answers 500 to the first `failFirst` requests, then 200.
 */
export async function startHttpReceiver(
  options: { failFirst?: number } = {},
): Promise<HttpReceiver> {
  const accepted: ReceivedRequest[] = [];
  const all: ReceivedRequest[] = [];
  let failuresLeft = options.failFirst ?? 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      all.push(request);
      if (failuresLeft > 0) {
        failuresLeft -= 1;
        res.writeHead(500).end('try again');
        return;
      }
      accepted.push(request);
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    accepted,
    all,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

type ReceivedMail = { from: string; to: string[]; data: string };

export type SmtpReceiver = {
  readonly url: string;
  readonly messages: ReceivedMail[];
  close(): Promise<void>;
};

/** A real SMTP server on 127.0.0.1 (no TLS, no auth) that keeps every message it accepts. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        messages.push({
          from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
