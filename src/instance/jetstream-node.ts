import { hostname } from 'node:os';
import type { Config } from '../config/schema.js';
import type { LogOpener } from '../commands/event-store.js';
import { connectJetStream, ensureStream, type JetStreamConnection } from '../log/jetstream-connect.js';
import { openJetStreamLog, type JetStreamEventLog } from '../log/jetstream-log.js';

/** The NATS side of a node whose log is a JetStream stream: the connection and how to open the local copy. */
export interface JetStreamNode {
  readonly conn: JetStreamConnection;
  readonly name: string;
  readonly openLog: LogOpener;
  /** The opened log, once `openLog` ran. */
  log(): JetStreamEventLog | undefined;
  close(): Promise<void>;
}

/** Room a batch needs past its request body: record envelopes, chain links, audit and detection records. */
export const BATCH_OVERHEAD_BYTES = 1024 * 1024;

/**
 * Connects to the cluster, creates or checks the stream, and refuses a cluster whose largest
 * message (`max_payload`) could not hold the batch of one request of the largest allowed body.
 */
export async function connectJetStreamNode(config: Config, logLine: (line: Record<string, unknown>) => void): Promise<JetStreamNode> {
  const js = config.storage.jetstream;
  if (!js) throw new Error('storage.backend is "jetstream" but storage.jetstream is missing');
  const name = js.nodeName ?? `${hostname()}-${config.server.port}`;
  const conn = await connectJetStream(js, `vigil ${name}`);
  try {
    const maxPayload = conn.nc.info?.max_payload ?? 0;
    const needed = 2 * config.limits.bodyBytes + BATCH_OVERHEAD_BYTES;
    if (maxPayload < needed) {
      throw new Error(`the NATS servers accept messages up to ${maxPayload} bytes and one batch may need ${needed} (2 x limits.bodyBytes + 1 MiB): raise max_payload in the nats-server configuration or lower limits.bodyBytes`);
    }
    await ensureStream(conn, js, maxPayload);
  } catch (err) {
    await conn.close();
    throw err;
  }
  void (async () => {
    for await (const s of conn.nc.status()) {
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error') logLine({ level: s.type === 'reconnect' ? 'info' : 'warn', msg: `nats ${s.type}`, server: 'server' in s ? s.server : undefined });
    }
  })().catch(() => undefined);
  let opened: JetStreamEventLog | undefined;
  return {
    conn,
    name,
    async openLog(store, onFatal) {
      opened = await openJetStreamLog(store, conn, onFatal);
      await opened.lead();
      return opened;
    },
    log: () => opened,
    close: () => conn.close(),
  };
}
