import { Packr } from 'msgpackr';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { CommandContext, DomainEvent } from '../commands/decision.js';
import type { IngestRaw } from '../commands/ingest-raw.js';

/** A write that reached a follower, sent to the leader as it came (the leader authenticates it again). */
export interface ForwardedHttp {
  readonly kind: 'http';
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Uint8Array;
  /** The TCP peer the follower saw: the request's source address on the leader, never an identity (docs/scale-out.md). */
  readonly peer?: string;
}

/** The access and audit records of a request a follower answered itself (a read). */
export interface ForwardedRecords {
  readonly kind: 'records';
  readonly facts: readonly DomainEvent[];
  readonly ctx: CommandContext;
}

/** A batch a follower's syslog listener received, normalized there, to be decided on the leader. */
export interface ForwardedIngestRaw {
  readonly kind: 'ingest-raw';
  readonly cmd: IngestRaw;
  readonly ctx: CommandContext;
}

/** What followers send the leader. */
export type Forwarded = ForwardedHttp | ForwardedRecords | ForwardedIngestRaw;

/** The leader's answer: the HTTP response (for a forwarded request) and the log head once it was durable. */
export interface ForwardReply {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  /** The log's head when the answer left: the follower waits for its copy to reach it (read-your-writes). */
  readonly seq: number;
}

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

/** The subject the leader answers forwarded requests on (a queue group, so one leader answers even while two think they lead). */
export function forwardSubject(stream: string): string {
  return `vigil.${stream}.leader`;
}

/** Answers forwarded requests with `handle`, until the returned subscription is drained. */
export function serveForwarded(nc: NatsConnection, subject: string, handle: (f: Forwarded) => Promise<ForwardReply>, log: (line: Record<string, unknown>) => void): Subscription {
  const sub = nc.subscribe(subject, { queue: 'leader' });
  void (async () => {
    for await (const m of sub) {
      void (async () => {
        let reply: ForwardReply;
        try {
          reply = await handle(packr.unpack(m.data) as Forwarded);
        } catch (err) {
          log({ level: 'warn', msg: 'forwarded request failed', error: (err as Error)?.message });
          const message = (err as Error)?.name === 'FatalStorageError'
            ? 'the log failed under this request: its outcome is unknown; retry (ingest is idempotent by event id)'
            : 'the leader could not take this request: retry';
          reply = { status: 503, headers: [['content-type', 'application/json'], ['retry-after', '2']], body: Buffer.from(JSON.stringify({ error: message, retryAfterSeconds: 2 })), seq: 0 };
        }
        m.respond(packr.pack(reply));
      })();
    }
  })();
  return sub;
}

/** Sends a forwarded request to the leader and waits for its answer (rejects when none answers in time). */
export async function forward(nc: NatsConnection, subject: string, f: Forwarded, timeoutMs: number): Promise<ForwardReply> {
  const m = await nc.request(subject, packr.pack(f), { timeout: timeoutMs });
  return packr.unpack(m.data) as ForwardReply;
}
