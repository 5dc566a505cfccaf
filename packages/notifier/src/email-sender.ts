import { createTransport } from 'nodemailer';
import type { EmailTarget } from '@monitor/schemas';
import { formatAlertMessage } from './alert-message.js';
import type { NotificationSender } from './notification-sender.js';
import { idempotencyKeyHeader } from './notification-sender.js';

/** One email as the transport takes it. */
export type MailMessage = {
  from: string;
  to: string[];
  subject: string;
  text: string;
  headers: Readonly<Record<string, string>>;
};

/** The SMTP client the email sender needs; nodemailer's transport in production. */
export interface MailTransport {
  /** Sends one message; resolves with the server's final reply (`250 OK …`), rejects on failure. */
  sendMail(message: MailMessage): Promise<{ response: string; rejected: unknown[] }>;
  /** Closes pooled connections. */
  close(): void;
}

export type SmtpTransportOptions = {
  /** `smtp://host:port`, `smtps://user:pass@host:465`: nodemailer's connection URL. */
  smtpUrl: string;
  /** Bounds connecting, the greeting, and each wait on the socket. */
  timeoutMs: number;
};

/** A nodemailer SMTP transport from the service's configuration. */
export function createSmtpTransport(options: SmtpTransportOptions): MailTransport {
  const transport = createTransport({
    url: options.smtpUrl,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
    dnsTimeout: options.timeoutMs,
  });
  return {
    async sendMail(message) {
      const info = await transport.sendMail({ ...message, headers: { ...message.headers } });
      return { response: info.response, rejected: info.rejected };
    },
    close() {
      transport.close();
    },
  };
}

/**
 * Emails the readable message to every recipient of the target, with the idempotency key in an
 * `Idempotency-Key` header. A failed attempt's detail is the SMTP server's reply when there is one.
 */
export function createEmailSender(transport: MailTransport): NotificationSender<EmailTarget> {
  return {
    async send(notification, target) {
      const message = formatAlertMessage(notification.payload, notification);
      try {
        const info = await transport.sendMail({
          from: target.from,
          to: [...target.to],
          subject: message.subject,
          text: message.text,
          headers: { [idempotencyKeyHeader]: notification.idempotencyKey },
        });
        const rejected =
          info.rejected.length === 0 ? '' : ` (${info.rejected.length} recipients refused)`;
        return { delivered: true, detail: `${info.response}${rejected}` };
      } catch (err) {
        return { delivered: false, detail: describeSmtpFailure(err) };
      }
    },
  };
}

/** nodemailer errors carry the server's reply in `response` and a code such as `ECONNECTION`. */
function describeSmtpFailure(err: unknown): string {
  if (typeof err !== 'object' || err === null) return `SMTP failed: ${String(err)}`;
  const fields = err as { response?: unknown; code?: unknown; message?: unknown };
  if (typeof fields.response === 'string' && fields.response !== '') return fields.response;
  const code = typeof fields.code === 'string' ? `${fields.code} ` : '';
  const message = typeof fields.message === 'string' ? fields.message : 'unknown error';
  return `SMTP failed: ${code}${message}`;
}
