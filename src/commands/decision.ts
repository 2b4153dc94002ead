import type { Actor } from '../kernel/record.js';

/** The typed rejections a command can return; one function maps them to HTTP (src/http/errors.ts). */
export type RejectionKind = 'invalid' | 'unauthenticated' | 'forbidden' | 'not_found' | 'conflict' | 'too_large';

/** Why a command was refused. `details` are extra response fields (such as an expected sequence). */
export interface Rejection {
  readonly kind: RejectionKind;
  readonly message: string;
  readonly issues?: readonly string[];
  readonly details?: Readonly<Record<string, unknown>>;
}

/** An event a decider emits: a past-tense fact; the log adds seq, time and actor. */
export interface DomainEvent<T extends string = string, D = unknown> {
  readonly type: T;
  readonly data: D;
}

/** What a decider returns: events plus the caller's result, or a rejection (which may still record events). */
export type Decision<R> =
  | { readonly ok: true; readonly events: readonly DomainEvent[]; readonly result: R }
  | { readonly ok: false; readonly rejection: Rejection; readonly events?: readonly DomainEvent[] };

/** Everything impure a decider may need, supplied from outside: time, actor, ids. */
export interface CommandContext {
  readonly now: string;
  readonly actor?: Actor;
  readonly requestId?: string;
}

/** Accepts a decision. */
export function accept<R>(events: readonly DomainEvent[], result: R): Decision<R> {
  return { ok: true, events, result };
}

/** Rejects a decision. */
export function reject(
  kind: RejectionKind,
  message: string,
  extra: { issues?: readonly string[]; details?: Record<string, unknown>; events?: readonly DomainEvent[] } = {},
): Decision<never> {
  return {
    ok: false,
    rejection: {
      kind,
      message,
      ...(extra.issues ? { issues: extra.issues } : {}),
      ...(extra.details ? { details: extra.details } : {}),
    },
    ...(extra.events ? { events: extra.events } : {}),
  };
}
