import { createTransport } from 'nodemailer';
import type { AuthorityConfig } from './config.js';

/** One plain-text e-mail. */
export interface Mail {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
}

/** Sends e-mail; resolves with the SMTP message id once the server accepted it. */
export interface Mailer {
  send(mail: Mail): Promise<{ messageId: string }>;
  close(): void;
}

/** An SMTP mailer (nodemailer) for the `email` config block; `password` comes from the owner-only password file. */
export function createSmtpMailer(email: NonNullable<AuthorityConfig['email']>, password?: string): Mailer {
  const { smtp } = email;
  const transport = createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    requireTLS: smtp.requireTLS,
    ...(smtp.user ? { auth: { user: smtp.user, pass: password ?? '' } } : {}),
    connectionTimeout: 15_000,
    greetingTimeout: 15_000,
    socketTimeout: 30_000,
  });
  return {
    async send(mail) {
      const info = await transport.sendMail({ from: email.from, to: mail.to, subject: mail.subject, text: mail.text });
      return { messageId: String(info.messageId ?? '') };
    },
    close: () => transport.close(),
  };
}
