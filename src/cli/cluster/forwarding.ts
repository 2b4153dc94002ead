import { Packr } from 'msgpackr';
import * as v from 'valibot';
import { ACCESS_EVENTS } from '../../events/access-events.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import type { CommandContext, DomainEvent } from '../../commands/decision.js';
import type { SyslogPending } from '../../services/listeners/syslog-intake.js';
import type { SyslogRejectionReason } from '../../services/listeners/syslog-rejection.js';

/** A write that reached a follower, sent to the leader as it came (the leader authenticates it again). */
export interface ForwardedHttp {
  readonly kind: 'http';
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: readonly (readonly [string, string])[];
  readonly body?: Uint8Array;
  /**
   * The TCP peer the follower saw: the request's source address on the leader, never an identity (docs/scale-out.md).
   */
  readonly peer?: string;
}

/** The access and audit records of a request a follower answered itself (a read). */
export interface ForwardedRecords {
  readonly kind: 'records';
  readonly facts: readonly DomainEvent[];
  readonly ctx: CommandContext;
}

/** A batch a follower's syslog listener took, as it took it: the leader normalizes and decides it. */
export interface ForwardedSyslog {
  readonly kind: 'syslog';
  readonly batch: readonly SyslogPending[];
  readonly ctx: CommandContext;
}

/** What followers send the leader. */
export type Forwarded = ForwardedHttp | ForwardedRecords | ForwardedSyslog;

/** The leader's answer: the HTTP response (for a forwarded request) and the log head once it was durable. */
export interface ForwardReply {
  readonly status: number;
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array;
  /** The log's head when the answer left: the follower waits for its copy to reach it (read-your-writes). */
  readonly seq: number;
}

const packr = new Packr({ useRecords: false, mapsAsObjects: true });

const Text = (max: number) => v.pipe(v.string(), v.maxLength(max));

/**
 * What a leader accepts on its subject: a forwarded write (bounded like an HTTP request), or the
 * access and audit records of a follower's read, of those types only. The subject is open only to
 * Vigil's NATS user (docs/scale-out.md), but a message is still input: it is checked before use.
 */
const ForwardedSchema = v.variant('kind', [
  v.strictObject({
    kind: v.literal('http'),
    method: v.pipe(v.string(), v.regex(/^[A-Z]{1,16}$/)),
    path: v.pipe(v.string(), v.startsWith('/'), v.maxLength(16_384)),
    headers: v.pipe(v.array(v.tuple([Text(256), Text(16_384)])), v.maxLength(256)),
    body: v.optional(v.instance(Uint8Array)),
    peer: v.optional(Text(64)),
  }),
  v.strictObject({
    kind: v.literal('syslog'),
    // As a listener's intake bounds a batch (2000 messages, each at most maxMessageBytes or a frame's head).
    batch: v.pipe(
      v.array(
        v.strictObject({
          record: v.strictObject({
            message: Text(1024 * 1024),
            receivedAt: IsoDateTime,
            peer: Text(64),
            listener: Text(32),
            transport: v.picklist(['tcp', 'tls', 'udp']),
            length: v.optional(v.pipe(v.number(), v.integer(), v.minValue(0))),
          }),
          rejection: v.optional(
            v.strictObject({
              reason: v.picklist(['not_rfc5424', 'too_large'] satisfies SyslogRejectionReason[]),
              error: Text(4096),
            }),
          ),
        }),
      ),
      v.minLength(1),
      v.maxLength(2000),
    ),
    ctx: v.strictObject({
      now: IsoDateTime,
      actor: v.strictObject({
        id: v.pipe(Text(64), v.startsWith('syslog:')),
        authentication: v.literal('syslog-listener'),
      }),
    }),
  }),
  v.strictObject({
    kind: v.literal('records'),
    facts: v.pipe(
      v.array(
        v.variant(
          'type',
          Object.entries(ACCESS_EVENTS).map(([type, data]) =>
            v.strictObject({ type: v.literal(type), data }),
          ) as unknown as [
            v.StrictObjectSchema<{ type: v.LiteralSchema<string, undefined>; data: v.GenericSchema }, undefined>,
          ],
        ),
      ),
      v.maxLength(64),
    ),
    ctx: v.strictObject({
      now: IsoDateTime,
      actor: v.optional(v.strictObject({ id: Text(256), authentication: Text(64) })),
      requestId: v.optional(Text(128)),
    }),
  }),
]);

/** A forwarded message as the leader may use it, or why not. */
export function readForwarded(bytes: Uint8Array): { ok: true; value: Forwarded } | { ok: false; error: string } {
  let raw: unknown;
  try {
    raw = packr.unpack(bytes);
  } catch (err) {
    return { ok: false, error: `not msgpack: ${(err as Error).message}` };
  }
  const checked = v.safeParse(ForwardedSchema, raw);
  if (!checked.success)
    return {
      ok: false,
      error: checked.issues
        .slice(0, 3)
        .map((i) => `${v.getDotPath(i) ?? '(message)'}: ${i.message}`)
        .join('; '),
    };
  return { ok: true, value: checked.output as unknown as Forwarded };
}

/**
 * The subject the leader answers forwarded requests on (a queue group, so one leader answers even while two think they
 * lead).
 */
export function forwardSubject(stream: string): string {
  return `vigil.${stream}.leader`;
}

/** Answers forwarded requests with `handle`, until the returned subscription is drained. */
export function serveForwarded(
  nc: NatsConnection,
  subject: string,
  handle: (f: Forwarded) => Promise<ForwardReply>,
  log: (line: Record<string, unknown>) => void,
): Subscription {
  const sub = nc.subscribe(subject, { queue: 'leader' });
  void (async () => {
    for await (const m of sub) {
      void (async () => {
        let reply: ForwardReply;
        try {
          const forwarded = readForwarded(m.data);
          if (!forwarded.ok) {
            log({ level: 'warn', msg: 'forwarded message refused', error: forwarded.error.slice(0, 500) });
            m.respond(
              packr.pack({
                status: 400,
                headers: [['content-type', 'application/json']],
                body: Buffer.from(JSON.stringify({ error: 'the forwarded request is malformed' })),
                seq: 0,
              } satisfies ForwardReply),
            );
            return;
          }
          reply = await handle(forwarded.value);
        } catch (err) {
          log({ level: 'warn', msg: 'forwarded request failed', error: (err as Error)?.message });
          const message =
            (err as Error)?.name === 'FatalStorageError'
              ? 'the log failed under this request: its outcome is unknown; retry (ingest is idempotent by event id)'
              : 'the leader could not take this request: retry';
          reply = {
            status: 503,
            headers: [
              ['content-type', 'application/json'],
              ['retry-after', '2'],
            ],
            body: Buffer.from(JSON.stringify({ error: message, retryAfterSeconds: 2 })),
            seq: 0,
          };
        }
        m.respond(packr.pack(reply));
      })();
    }
  })();
  return sub;
}

/** Sends a forwarded request to the leader and waits for its answer (rejects when none answers in time). */
export async function forward(
  nc: NatsConnection,
  subject: string,
  f: Forwarded,
  timeoutMs: number,
): Promise<ForwardReply> {
  const m = await nc.request(subject, packr.pack(f), { timeout: timeoutMs });
  return packr.unpack(m.data) as ForwardReply;
}
