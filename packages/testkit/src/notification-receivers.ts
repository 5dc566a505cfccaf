import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/**
 * The network the receivers below listen in, for the notifier's allowed target networks: it
 * refuses loopback targets unless they are allowed.
 */
export const receiverNetwork = '127.0.0.1/32';

/** One request as it arrived: the raw body, so a test can check a signature over its bytes. */
export type HttpRequestReceived = { headers: IncomingHttpHeaders; body: Buffer };

/** A request and the status the receiver answered it with. */
type HttpRequestAnswered = HttpRequestReceived & { status: number };

/** Chooses the status for the `index`-th request (from 0, in arrival order). */
type HttpStatusOf = (request: HttpRequestReceived, index: number) => number;

export type HttpReceiver = {
  readonly url: string;
  /** Every request in arrival order, those answered with a failure included. */
  readonly requests: HttpRequestAnswered[];
  /** The requests answered 2xx, in arrival order: what the sender counts as delivered. */
  accepted(): HttpRequestAnswered[];
  close(): Promise<void>;
};

/**
 * A local HTTP endpoint standing in for Slack's incoming webhook or a customer's webhook. It
 * answers each request with `statusOf` (200 unless given), so a test can make it fail the first
 * attempts or refuse a bad signature.
 */
export async function startHttpReceiver(statusOf: HttpStatusOf = () => 200): Promise<HttpReceiver> {
  const requests: HttpRequestAnswered[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request = { headers: req.headers, body: Buffer.concat(chunks) };
      const status = statusOf(request, requests.length);
      requests.push({ ...request, status });
      // A failure's body (`nope`) lets a test show that the notifier keeps only the status.
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(isSuccess(status) ? 'ok' : 'nope');
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    requests,
    accepted: () => requests.filter((request) => isSuccess(request.status)),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** One message as the SMTP server received it: the envelope and the raw message text. */
type MailReceived = { from: string; to: string[]; data: string };

export type SmtpReceiver = {
  readonly url: string;
  /** Every message accepted, in arrival order. */
  readonly messages: MailReceived[];
  close(): Promise<void>;
};

/** A real SMTP server on 127.0.0.1 (no TLS, no auth) that keeps every message it accepts. */
export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const messages: MailReceived[] = [];
  const server = new SMTPServer({
    secure: false,
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        const from = session.envelope.mailFrom;
        messages.push({
          from: from === false ? '' : from.address,
          to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          data: Buffer.concat(chunks).toString('utf8'),
        });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  return {
    url: `smtp://127.0.0.1:${(server.server.address() as AddressInfo).port}`,
    messages,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
