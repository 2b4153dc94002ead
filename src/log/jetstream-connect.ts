import { readFileSync } from 'node:fs';
import { connect, credsAuthenticator, tokenAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import {
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type StreamConfig,
} from '@nats-io/jetstream';
import { secretFileProblem } from '../kernel/secret-files.js';
import type { JetStreamConfig } from './jetstream-config.js';
import { updateStreamSettings, type SettingNotice } from './jetstream-settings.js';

/** An open connection to the NATS cluster that holds the log, with its JetStream clients. */
export interface JetStreamConnection {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  /** The subject the log's batches are published on. */
  readonly subject: string;
  /** The subject of batches that cut the log (retention): the stream's last cut is found by it (docs/scale-out.md). */
  readonly cutSubject: string;
  readonly stream: string;
  close(): Promise<void>;
}

/** Reads a credentials file, refusing one (or a folder) that group or others can reach, as for every secret. */
function readSecret(path: string): Uint8Array {
  const problem = secretFileProblem(path);
  if (problem) throw new Error(`refusing to start: ${problem}`);
  return readFileSync(path);
}

/**
 * Connects to the cluster with the credentials read from their files (never from argv or the
 * URL), and retries for ever once connected: a server that goes away is replaced by another.
 */
export async function connectJetStream(config: JetStreamConfig, name: string): Promise<JetStreamConnection> {
  const authenticator = config.credentialsFile
    ? credsAuthenticator(readSecret(config.credentialsFile))
    : config.tokenFile
      ? tokenAuthenticator(Buffer.from(readSecret(config.tokenFile)).toString('utf8').trim())
      : undefined;
  const nc = await connect({
    servers: config.servers,
    name,
    ...(authenticator ? { authenticator } : {}),
    maxReconnectAttempts: -1,
    reconnectTimeWait: 500,
    timeout: 10_000,
  }).catch((err: Error) => {
    // Said as a start-up refusal (the CLI prints it as it is): which servers, and what to do.
    throw new Error(
      `refusing to start: cannot reach NATS at ${config.servers.join(', ')} (${err.message}); start the NATS servers ` +
        `first, or check storage.jetstream.servers and the credentials file (docs/scale-out.md)`,
    );
  });
  try {
    const jsm = await jetstreamManager(nc, { timeout: config.publishTimeoutSeconds * 1000 });
    const js = jetstream(nc, { timeout: config.publishTimeoutSeconds * 1000 });
    return {
      nc,
      js,
      jsm,
      subject: `vigil.${config.stream}.batches`,
      cutSubject: `vigil.${config.stream}.cuts`,
      stream: config.stream,
      close: () => nc.close(),
    };
  } catch (err) {
    await nc.close();
    throw new Error(
      `refusing to start: JetStream at ${config.servers.join(', ')} did not answer (${(err as Error).message}): a ` +
        `majority of the NATS servers must be up with JetStream on; under systemd (Restart=always) the node tries ` +
        `again (docs/scale-out.md)`,
    );
  }
}

/**
 * The duplicate window: a publish retried after a lost acknowledgement is recognised for this long. The leader
 * retries for 3 x publishTimeoutSeconds, so the window is at least 4 x that, and never under 2 minutes.
 */
export function duplicateWindowNs(config: JetStreamConfig): number {
  return Math.max(120, 4 * config.publishTimeoutSeconds) * 1_000_000_000;
}

/** The stream settings the log needs; docs/scale-out.md says why each is set. */
export function streamSettings(
  config: JetStreamConfig,
  subjects: { subject: string; cutSubject: string },
  maxMessageBytes: number,
): Partial<StreamConfig> & { name: string } {
  return {
    name: config.stream,
    subjects: [subjects.subject, subjects.cutSubject],
    storage: 'file' as StreamConfig['storage'],
    num_replicas: config.replicas,
    retention: 'limits' as StreamConfig['retention'],
    discard: 'new' as StreamConfig['discard'],
    max_msgs: -1,
    max_bytes: -1,
    max_age: 0,
    max_msg_size: maxMessageBytes,
    duplicate_window: duplicateWindowNs(config),
    deny_delete: true,
    // Retention removes the expired prefix with a purge up to a sequence, after the cut is in the
    // stream; NATS cannot lift deny_purge once set, so a stream is created without it.
    deny_purge: false,
    allow_rollup_hdrs: false,
  };
}

/**
 * What an existing stream allows: retention needs the cuts subject and purges (streams of earlier versions have
 * neither).
 */
export interface StreamAbilities {
  readonly retention: boolean;
  /**
   * When the stream was created (as the servers keep it, the same for every node): it names the stream's export items.
   */
  readonly created: string;
}

/** Settings a stream must have to hold the log; any other value is refused rather than silently changed. */
const REQUIRED: readonly (keyof StreamConfig)[] = [
  'storage',
  'retention',
  'max_msgs',
  'max_bytes',
  'max_age',
  'deny_delete',
  'allow_rollup_hdrs',
];

/**
 * Creates the log's stream, or checks an existing one: a stream that could lose, reorder or
 * purge records (a limit, a retention policy, memory storage) is refused with the difference;
 * the settings the configuration sets are brought to it (src/log/jetstream-settings.ts).
 */
export async function ensureStream(
  conn: JetStreamConnection,
  config: JetStreamConfig,
  maxMessageBytes: number,
  notice: SettingNotice = () => {},
): Promise<StreamAbilities> {
  const wanted = streamSettings(config, conn, maxMessageBytes);
  const existing = await conn.jsm.streams.info(config.stream).catch((err: unknown) => {
    if (
      (err as { name?: string })?.name === 'StreamNotFoundError' ||
      /stream not found/i.test((err as Error)?.message ?? '')
    )
      return undefined;
    throw err;
  });
  if (!existing) {
    const added = await conn.jsm.streams.add(wanted);
    return { retention: true, created: added.created };
  }
  const have = existing.config as unknown as Record<string, unknown>;
  const differences = REQUIRED.filter(
    (k) => JSON.stringify(have[k]) !== JSON.stringify((wanted as Record<string, unknown>)[k]),
  );
  // A stream made by an earlier version has only the batches subject and deny_purge: it holds the log, without
  // retention.
  const subjects = JSON.stringify(existing.config.subjects);
  if (subjects !== JSON.stringify([conn.subject]) && subjects !== JSON.stringify(wanted.subjects))
    differences.push('subjects');
  if (differences.length > 0) {
    const needs = (k: string) => JSON.stringify((wanted as Record<string, unknown>)[k]);
    const listed = differences.map((k) => `${k}=${JSON.stringify(have[k])} (needs ${needs(k)})`).join(', ');
    throw new Error(
      `refusing to start: the stream ${config.stream} has settings a log cannot have: ${listed}; Vigil does not ` +
        `change these itself, since a limit may already have dropped acknowledged batches and NATS cannot change ` +
        `the storage in place: check the stream (nats stream info ${config.stream}) and lift the limits by hand ` +
        `only if it still holds every batch, or start a new stream (another storage.jetstream.stream, every node ` +
        `with an empty storage.path) (docs/scale-out.md, "Cluster settings")`,
    );
  }
  await updateStreamSettings(
    conn.jsm,
    existing.config,
    {
      num_replicas: config.replicas,
      duplicate_window: duplicateWindowNs(config),
      max_msg_size: maxMessageBytes,
    },
    config,
    notice,
  );
  return {
    retention: subjects === JSON.stringify(wanted.subjects) && existing.config.deny_purge === false,
    created: existing.created,
  };
}
