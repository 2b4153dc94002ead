import { hostname } from 'node:os';
import type { Config } from '../../services/config-schema.js';
import type { LogOpener } from '../../commands/event-store.js';
import type { ProjectionRuntime } from '../../projections/runtime.js';
import { startLeaderLease, type LeaderLease } from '../cluster/leader-lease.js';
import { connectJetStream, ensureStream, type JetStreamConnection } from '../../log/jetstream-connect.js';
import { checkLeaseHolder, leaseBucketOf, sharedSettingsOf, updateLeaseBucket } from '../../log/jetstream-settings.js';
import { openJetStreamLog, type JetStreamEventLog, type Replica } from '../../log/jetstream-log.js';
import { carriedWritesOfCut } from '../../log/retention/carried.js';
import { forwardSubject, serveForwarded, type Forwarded, type ForwardReply } from '../cluster/forwarding.js';
import type { Subscription } from '@nats-io/transport-node';
import { createClusterEdge, type ClusterEdge } from '../cluster/cluster-edge.js';
import { NotLeaderError, type EventLog, type LogHead } from '../../log/event-log.js';
import type { Writer } from '../../commands/writer.js';
import { decideIngestRaw } from '../../commands/ingest-raw.js';
import { syslogCommand, type SyslogCluster } from '../../services/listeners/syslog-intake.js';
import { ENVELOPE_LIMITS } from '../../events/collector-protocol/envelope.js';
import { ReadSideLagging } from '../../projections/read-side/read-side.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';

/** The NATS side of a node whose log is a JetStream stream: the connection, the local copy, the lease. */
export interface JetStreamNode {
  readonly conn: JetStreamConnection;
  readonly name: string;
  /** When the log's stream was created: with its name, what tells this stream from any other (export item ids). */
  readonly streamCreated: string;
  readonly openLog: LogOpener;
  /** The opened log, once `openLog` ran. */
  log(): JetStreamEventLog | undefined;
  /**
   * Follows the stream into `runtime` and campaigns for the lease; `onLeading` runs each time this
   * node starts leading (work only the writer does at start: the rule pack, imported grants, the
   * export workers); `onFollowing` each time it stops leading, before it steps down. A cut read
   * from the stream (retention) is applied to the models through `onCut` (src/services/retention/follow-cut.ts).
   */
  start(
    runtime: ProjectionRuntime,
    onLeading: () => Promise<void>,
    onFollowing?: () => Promise<void>,
    onCut?: Replica['cut'],
  ): Promise<void>;
  /** Whether this node leads now, and which node does as far as it knows. */
  leadership(): { readonly leading: boolean; readonly leader: string | undefined };
  /** Whether the connection to NATS is up. */
  connected(): boolean;
  /** Calls `listener` when the node seen holding the lease changes; returns the unsubscribe. */
  onLeaderChange(listener: () => void): () => void;
  /** The subject followers forward to; the node answers on it (with `handle`) while it leads. */
  readonly forwardSubject: string;
  answerForwarded(handle: (f: Forwarded) => Promise<ForwardReply>): void;
  /** Stops answering forwarded requests (the first step of stopping). */
  quiesce(): Promise<void>;
  /**
   * Read-your-writes across nodes: waits until the local copy holds what the stream held when the
   * read arrived (one JetStream API round trip on a follower), then for the read side (`local`).
   */
  readYourWrites(local: () => Promise<void>): Promise<void>;
  close(): Promise<void>;
}

/** How long a follower's read waits for its copy to reach the stream's head (as the read side's wait). */
const READ_WAIT_MS = 10_000;

/** Room a batch needs past its request body: record envelopes, chain links, audit and detection records. */
export const BATCH_OVERHEAD_BYTES = 1024 * 1024;

/** The largest request body a node takes (and a follower forwards): limits.bodyBytes or a collector envelope. */
function largestBody(config: Config): number {
  return Math.max(config.limits.bodyBytes, ENVELOPE_LIMITS.transportBytes);
}

/**
 * A start-up step the stream did not answer (a timeout while the NATS servers have no majority or
 * no stream leader yet), said as a refusal with what to do; a refusal already worded is kept. The
 * service wraps every start-up step of a JetStream node in it (src/cli/instance/serve.ts).
 */
export function unanswered(stream: string, err: Error): Error {
  if (/^refusing to start: /.test(err.message)) return err;
  return new Error(
    `refusing to start: the JetStream stream ${stream} did not answer (${err.message}): a majority of the NATS ` +
      `servers must be up and have elected the stream's leader; under systemd (Restart=always) the node tries again ` +
      `(docs/scale-out.md)`,
  );
}

/**
 * Connects to the cluster, creates or checks the stream, and refuses a cluster whose largest
 * message (`max_payload`) could not hold the batch of one request of the largest allowed body. The
 * cluster settings in NATS (stream and lease bucket) are checked against the configuration, and
 * updated or refused (src/log/jetstream-settings.ts).
 */
export async function connectJetStreamNode(
  config: Config,
  logLine: (line: Record<string, unknown>) => void,
): Promise<JetStreamNode> {
  const js = config.storage.jetstream;
  if (!js) throw new Error('refusing to start: storage.backend is "jetstream" but storage.jetstream is missing');
  const name = js.nodeName ?? `${hostname()}-${config.server.port}`;
  const conn = await connectJetStream(js, `vigil ${name}`);
  const notice = (line: Record<string, unknown>) => logLine({ ...line, node: name });
  let streamCreated: string;
  try {
    const maxPayload = conn.nc.info?.max_payload ?? 0;
    const needed = 2 * largestBody(config) + BATCH_OVERHEAD_BYTES;
    if (maxPayload < needed) {
      throw new Error(
        `refusing to start: the NATS servers accept messages up to ${maxPayload} bytes and one batch may need ` +
          `${needed} (2 x the largest request body, the larger of limits.bodyBytes and a 5 MiB collector ` +
          `envelope, + 1 MiB): raise max_payload in the nats-server configuration (16MB fits the defaults)`,
      );
    }
    // Settings shared by the cluster: refused while a node with other values leads, else brought to this config.
    await checkLeaseHolder(conn.jsm, js, name);
    const abilities = await ensureStream(conn, js, maxPayload, notice);
    await updateLeaseBucket(conn.jsm, js, notice);
    streamCreated = abilities.created;
    if (config.retention.enabled && !abilities.retention) {
      throw new Error(
        `refusing to start: retention.enabled needs a stream that can be purged up to a cut, and the stream ` +
          `${js.stream} was created by an earlier version with deny_purge, which NATS cannot lift: keep retention ` +
          `off on this stream, or start a new stream (another storage.jetstream.stream, every node with an empty ` +
          `storage.path) (docs/scale-out.md, "Retention")`,
      );
    }
  } catch (err) {
    await conn.close();
    throw err;
  }
  let connected = true;
  void (async () => {
    for await (const s of conn.nc.status()) {
      if (s.type === 'disconnect') connected = false;
      if (s.type === 'reconnect') connected = true;
      if (s.type === 'disconnect' || s.type === 'reconnect' || s.type === 'error')
        logLine({
          level: s.type === 'reconnect' ? 'info' : 'warn',
          msg: `nats ${s.type}`,
          server: 'server' in s ? s.server : undefined,
        });
    }
  })().catch(() => undefined);
  const subject = forwardSubject(js.stream);
  let handler: ((f: Forwarded) => Promise<ForwardReply>) | undefined;
  let answering: Subscription | undefined;
  const answer = () => {
    if (handler && !answering && opened?.leading()) answering = serveForwarded(conn.nc, subject, handler, logLine);
  };
  const stopAnswering = async () => {
    const sub = answering;
    answering = undefined;
    await sub?.drain().catch(() => undefined);
  };
  let opened: JetStreamEventLog | undefined;
  let lease: LeaderLease | undefined;
  // Leading and stepping down run one at a time, in the order the lease asked for them.
  let transitions: Promise<void> = Promise.resolve();
  let onFatal: (err: Error) => void = () => {};
  const leaderListeners = new Set<() => void>();
  return {
    conn,
    name,
    streamCreated,
    async openLog(store, fatal, logOptions) {
      onFatal = fatal ?? onFatal;
      opened = await openJetStreamLog(store, conn, fatal, {
        ...(logOptions?.signer ? { signer: logOptions.signer } : {}),
        retryWindowMs: js.publishTimeoutSeconds * 3000,
        cutWrites: (records) => carriedWritesOfCut(store.root, records),
        notice: (line) => logLine({ ...line, node: name }),
      });
      return opened;
    },
    log: () => opened,
    async start(runtime, onLeading, onFollowing, onCut) {
      const log = opened;
      if (!log) throw new Error('the log is not open');
      await log.replicate({
        apply: (records) => runtime.apply(records),
        settle: (records) => runtime.settle(records),
        ...(onCut ? { cut: onCut } : {}),
      });
      const transition = (step: () => Promise<void>) => {
        transitions = transitions
          .then(step)
          .catch((err: unknown) => onFatal(err instanceof Error ? err : new Error(String(err))));
        return transitions;
      };
      lease = await startLeaderLease({
        nc: conn.nc,
        bucket: leaseBucketOf(js.stream),
        advertise: sharedSettingsOf(js),
        node: name,
        ttlMs: js.leaseSeconds * 1000,
        replicas: js.replicas,
        log: logLine,
        onLeaderChange: () => {
          for (const l of [...leaderListeners]) l();
        },
        onAcquired: () =>
          transition(async () => {
            await log.lead(() => lease?.held() ?? false);
            logLine({ level: 'info', msg: 'leading: this node appends to the log', node: name, head: log.head().seq });
            await onLeading();
            answer();
          }),
        onLost: () =>
          void transition(async () => {
            await stopAnswering();
            await onFollowing?.();
            await log.stepDown();
            logLine({
              level: 'info',
              msg: 'following: this node forwards writes to the leader',
              node: name,
              head: log.head().seq,
            });
          }),
      });
      await transitions;
    },
    leadership: () => ({ leading: opened?.leading() ?? false, leader: lease?.leader() }),
    connected: () => connected && !conn.nc.isClosed(),
    onLeaderChange(listener) {
      leaderListeners.add(listener);
      return () => leaderListeners.delete(listener);
    },
    forwardSubject: subject,
    answerForwarded(handle) {
      handler = handle;
      answer();
    },
    async readYourWrites(local) {
      const log = opened;
      const caught = log ? await log.caughtUpWithStream(READ_WAIT_MS).catch(() => false) : false;
      if (!caught) throw new ReadSideLagging("this node could not confirm it holds the log's head");
      await local();
    },
    quiesce() {
      handler = undefined;
      return stopAnswering();
    },
    async close() {
      await stopAnswering();
      await lease?.stop();
      await transitions;
      await conn.close();
    },
  };
}

/**
 * The HTTP edge of a JetStream node: writes reaching a follower go to the leader, reads stay
 * local and wait for the sequence the leader answered; the leader answers forwarded requests.
 */
export function clusterEdgeOf(
  node: JetStreamNode,
  instance: { readonly log: { head(): LogHead; follow: EventLog['follow'] } },
  appFetch: (req: Request, env: unknown) => Response | Promise<Response>,
  pipeline: Pipeline<WriteModels>,
  config: Config,
): ClusterEdge {
  const edge = createClusterEdge({
    node: {
      leading: () => node.leadership().leading,
      connected: () => node.connected(),
      onLeaderChange: (l) => node.onLeaderChange(l),
    },
    nc: node.conn.nc,
    subject: node.forwardSubject,
    log: instance.log,
    appFetch,
    peerOf: (env) =>
      (env as { incoming?: { socket?: { remoteAddress?: string } } } | undefined)?.incoming?.socket?.remoteAddress,
    record: async (facts, ctx) => {
      await pipeline.record(facts, ctx);
    },
    ingestSyslog: async (batch, ctx) => {
      const { cmd } = syslogCommand(batch, ctx.now);
      await pipeline.dispatch({ decide: (m) => decideIngestRaw(m, cmd), ctx });
    },
    bodyCap: largestBody(config),
    timeoutMs: 30_000,
  });
  node.answerForwarded((f) => edge.handle(f));
  return edge;
}

/**
 * A writer for work only the leader does (time-driven checks): on a follower its commands are
 * answered with a conflict instead of reaching the log, where they would be refused anyway.
 */
export function leaderOnly(writer: Writer<WriteModels>, leading: () => boolean): Writer<WriteModels> {
  return {
    models: writer.models,
    execute: (decide, ctx) =>
      leading()
        ? writer.execute(decide, ctx)
        : Promise.resolve({
            ok: false,
            rejection: { kind: 'conflict', message: 'this node does not lead: the leader runs this command' },
          }),
    record: (events, ctx) =>
      leading() ? writer.record(events, ctx) : Promise.reject(new NotLeaderError('this node does not lead')),
    cut: (events, ctx, cut) =>
      leading() ? writer.cut(events, ctx, cut) : Promise.reject(new NotLeaderError('this node does not lead')),
  };
}

/**
 * How syslog listeners write on a JetStream node: a follower forwards each batch to the leader
 * (cut to half the largest forwarded body, so it fits one NATS message), offered again through a
 * leader change for three leases (at least 30 s).
 */
export function syslogClusterOf(edge: ClusterEdge, config: Config): SyslogCluster {
  return {
    submit: (batch, ctx, local) => edge.ingestSyslog(batch, ctx, local),
    batchBytes: Math.floor(largestBody(config) / 2),
    retrySeconds: Math.max(30, 3 * (config.storage.jetstream?.leaseSeconds ?? 10)),
  };
}
