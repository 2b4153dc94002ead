import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

/** A message the test SMTP server received. */
export interface ReceivedMail { readonly from: string; readonly to: string[]; readonly raw: string }

/** A real SMTP server on a loopback port, in-process, collecting every message. */
export async function startSmtpServer(): Promise<{ port: number; messages: ReceivedMail[]; close(): Promise<void> }> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onData(stream, session, callback) {
      let raw = '';
      stream.on('data', (chunk: Buffer) => { raw += chunk.toString('utf8'); });
      stream.on('end', () => {
        messages.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address), raw });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const port = (server.server.address() as AddressInfo).port;
  return { port, messages, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
