import type { NatsConnection } from '@nats-io/transport-node';
import type { CommandContext, DomainEvent } from '../../commands/decision.js';
import type { SyslogPending } from '../../services/listeners/syslog-intake.js';
import type { EventLog } from '../../log/event-log.js';
import { HttpError } from '../../http/errors.js';
import { forward, type Forwarded, type ForwardReply } from './forwarding.js';

/**
 * What the edge needs to know of the node: whether it leads, whether NATS is reachable, and when the leader changes.
 */
export interface NodeState {
  leading(): boolean;
  connected(): boolean;
  /** Calls `listener` when the node seen holding the lease changes; returns the unsubscribe. */
  onLeaderChange(listener: () => void): () => void;
}

/** The HTTP edge of a JetStream node: local reads, writes forwarded to the leader, and the leader's side of both. */
export interface ClusterEdge {
  /** Wraps the app's fetch: a write on a follower goes to the leader; anything while NATS is unreachable is 503. */
  fetch(req: Request, env: unknown): Promise<Response>;
  /** Appends a request's access records: here when leading, through the leader otherwise. */
  recordAccess(facts: readonly DomainEvent[], ctx: CommandContext, local: () => Promise<void>): Promise<void>;
  /**
   * Writes a syslog batch: here when leading, on the leader otherwise; resolves once durable (rejects when no leader
   * took it).
   */
  ingestSyslog(batch: readonly SyslogPending[], ctx: CommandContext, local: () => Promise<void>): Promise<void>;
  /** The leader's side: runs a forwarded request through the app, or appends forwarded records. */
  handle(f: Forwarded): Promise<ForwardReply>;
}

/** What the edge is built from. */
export interface EdgeOptions {
  readonly node: NodeState;
  readonly nc: NatsConnection;
  readonly subject: string;
  readonly log: Pick<EventLog, 'head' | 'follow'>;
  readonly appFetch: (req: Request, env: unknown) => Response | Promise<Response>;
  readonly peerOf: (env: unknown) => string | undefined;
  /** Appends forwarded access records on the leader. */
  readonly record: (facts: readonly DomainEvent[], ctx: CommandContext) => Promise<void>;
  /** Normalizes and decides a forwarded syslog batch on the leader (with the detection step). */
  readonly ingestSyslog: (batch: readonly SyslogPending[], ctx: CommandContext) => Promise<void>;
  /** The largest request body a follower forwards (the larger of limits.bodyBytes and the collector envelope limit). */
  readonly bodyCap: number;
  readonly timeoutMs: number;
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'upgrade',
  'proxy-connection',
  'te',
  'trailer',
]);
/** How long a follower waits for its copy to reach the leader's answer before answering anyway (as a read would). */
const CATCH_UP_MS = 10_000;

function errorResponse(status: number, error: string, retryAfterSeconds?: number): Response {
  return new Response(JSON.stringify({ error, ...(retryAfterSeconds ? { retryAfterSeconds } : {}) }), {
    status,
    headers: {
      'content-type': 'application/json',
      ...(retryAfterSeconds ? { 'retry-after': String(retryAfterSeconds) } : {}),
    },
  });
}

const UNREACHABLE = 'the log (NATS JetStream) is unreachable from this node: nothing was written; retry';
const NO_LEADER = 'no leader answered (a leader change is in progress): nothing may have been written; retry';

async function readCapped(req: Request, cap: number): Promise<Uint8Array | undefined> {
  if (!req.body) return new Uint8Array();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of req.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > cap) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

/** Builds the edge of a JetStream node (docs/scale-out.md, "What a client can rely on"). */
export function createClusterEdge(o: EdgeOptions): ClusterEdge {
  /** Resolves once the local copy holds `seq` (or after the catch-up bound). */
  function reached(seq: number): Promise<void> {
    if (o.log.head().seq >= seq) return Promise.resolve();
    return new Promise((resolve) => {
      let stop: (() => void) | undefined;
      let done = false;
      const finish = () => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        stop?.();
        resolve();
      };
      const timer = setTimeout(finish, CATCH_UP_MS);
      stop = o.log.follow(o.log.head().seq, (r) => {
        if (r.seq >= seq) finish();
      });
      if (done) stop();
      if (o.log.head().seq >= seq) finish();
    });
  }

  async function toLeader(f: Forwarded): Promise<ForwardReply | Response> {
    // A leader that dies leaves its requests unanswered: once another is seen they are answered
    // at once (outcome unknown) rather than after the full timeout.
    let unsubscribe = () => {};
    const changed = new Promise<never>((_, reject) => {
      unsubscribe = o.node.onLeaderChange(() =>
        reject(new Error('the leader changed while the request was under way')),
      );
    });
    changed.catch(() => undefined);
    try {
      const reply = await Promise.race([forward(o.nc, o.subject, f, o.timeoutMs), changed]);
      unsubscribe();
      await reached(reply.seq);
      return reply;
    } catch (err) {
      unsubscribe();
      if (/leader changed/.test((err as Error)?.message ?? ''))
        return errorResponse(
          503,
          'the leader changed while the request was under way: the outcome is unknown; retry (ingest is idempotent ' +
            'by event id)',
          1,
        );
      const name = (err as Error)?.name ?? '';
      const noLeader = /NoResponders/i.test(name) || /no responders/i.test((err as Error)?.message ?? '');
      // A request that timed out may have been carried out: the client retries (ingest is idempotent by event id).
      return errorResponse(
        503,
        noLeader
          ? NO_LEADER
          : 'the leader did not answer in time: the outcome is unknown; retry (ingest is idempotent by event id)',
        2,
      );
    }
  }

  return {
    async fetch(req, env) {
      if (!o.node.connected()) return errorResponse(503, UNREACHABLE, 5);
      if (SAFE.has(req.method) || o.node.leading()) return o.appFetch(req, env);
      const body = await readCapped(req, o.bodyCap);
      if (!body) return errorResponse(413, `request body larger than ${o.bodyCap} bytes`);
      const url = new URL(req.url);
      const peer = o.peerOf(env);
      const headers: [string, string][] = [];
      req.headers.forEach((value, key) => {
        if (!HOP_BY_HOP.has(key)) headers.push([key, value]);
      });
      const reply = await toLeader({
        kind: 'http',
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        ...(body.byteLength > 0 ? { body } : {}),
        ...(peer ? { peer } : {}),
      });
      if (reply instanceof Response) return reply;
      return new Response(SAFE.has(req.method) || reply.status === 204 || reply.status === 304 ? null : reply.body, {
        status: reply.status,
        headers: reply.headers.filter(([k]) => !HOP_BY_HOP.has(k)) as [string, string][],
      });
    },
    async recordAccess(facts, ctx, local) {
      if (!o.node.connected()) throw new HttpError(503, UNREACHABLE, undefined, { retryAfterSeconds: 5 });
      if (o.node.leading()) return local();
      const reply = await toLeader({ kind: 'records', facts, ctx });
      if (reply instanceof Response) throw new HttpError(503, NO_LEADER, undefined, { retryAfterSeconds: 2 });
      // Anything but "recorded" means the trail would miss this request: never answer it as if it were kept.
      if (reply.status !== 204)
        throw new HttpError(
          503,
          `the leader did not record this request's access records (${reply.status}); retry`,
          undefined,
          { retryAfterSeconds: 2 },
        );
    },
    async ingestSyslog(batch, ctx, local) {
      if (!o.node.connected()) throw new Error(UNREACHABLE);
      if (o.node.leading()) return local();
      const reply = await toLeader({ kind: 'syslog', batch, ctx });
      if (reply instanceof Response) throw new Error(((await reply.json()) as { error: string }).error);
      if (reply.status !== 204) throw new Error(`the leader answered ${reply.status}`);
    },
    async handle(f) {
      if (f.kind === 'syslog') {
        await o.ingestSyslog(f.batch, f.ctx);
        return { status: 204, headers: [], body: new Uint8Array(), seq: o.log.head().seq };
      }
      if (f.kind === 'records') {
        await o.record(f.facts, f.ctx);
        return { status: 204, headers: [], body: new Uint8Array(), seq: o.log.head().seq };
      }
      if (f.body && f.body.byteLength > o.bodyCap)
        return {
          status: 413,
          headers: [['content-type', 'application/json']],
          body: Buffer.from(JSON.stringify({ error: `request body larger than ${o.bodyCap} bytes` })),
          seq: o.log.head().seq,
        };
      // The peer counts as the request's source address; loopback and mesh identities belong to the
      // node a client reached, so a forwarded request never gets them (the guard sees `forwarded`).
      const req = new Request(`http://leader${f.path}`, {
        method: f.method,
        headers: f.headers as [string, string][],
        ...(f.body ? { body: f.body } : {}),
      });
      const res = await o.appFetch(req, { incoming: { socket: { remoteAddress: f.peer } }, forwarded: true });
      const body = new Uint8Array(await res.arrayBuffer());
      const headers: [string, string][] = [];
      res.headers.forEach((value, key) => {
        if (!HOP_BY_HOP.has(key)) headers.push([key, value]);
      });
      return { status: res.status, headers, body, seq: o.log.head().seq };
    },
  };
}
