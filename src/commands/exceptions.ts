import * as v from 'valibot';
import { compileExceptionCondition, mappingFor } from '../detection/exception-condition.js';
import { DetectionRecord } from '../events/detection-records.js';
import type { EventData } from '../events/union.js';
import { IsoDateTime, type NormalizedEvent } from '../events/normalized-event.js';
import { createHash } from 'node:crypto';
import type { AlertsState } from '../projections/alerts.js';
import type { DetectionState } from '../projections/detection.js';
import { exceptionLive, type ExceptionsState } from '../projections/exceptions.js';
import { accept, reject, type CommandContext, type Decision, type DomainEvent } from './decision.js';
import { Reason } from './review-alert.js';
import { systemAlertId, systemAlertRaised } from './system-alerts.js';

/** The built-in detection identity of an exception about to expire (a reminder for its owner). */
export const EXCEPTION_EXPIRING_RULE = 'vigil.exception-expiring';

/** At most this many exceptions may be live at once (each is tried on the matches of the rules it covers). */
export const EXCEPTIONS_LIVE_MAX = 10_000;

/** The longest an exception may last when it is not permanent. */
export const EXCEPTION_MAX_DAYS = 366;

const Name = (max: number) => v.pipe(v.string(), v.trim(), v.minLength(1), v.maxLength(max));

/** What an exception applies to, as a client writes it. */
export const ExceptionScopeBody = v.variant('kind', [
  v.strictObject({ kind: v.literal('rule'), ruleId: Name(256) }),
  v.strictObject({
    kind: v.literal('tag'),
    tag: v.pipe(v.string(), v.trim(), v.regex(/^[a-z0-9][a-z0-9._-]{0,127}$/i, 'expected a Sigma tag')),
  }),
  v.strictObject({ kind: v.literal('all') }),
]);

/**
 * The terms of an exception as a client writes them: scope, condition (Sigma detection syntax), reason, owner,
 * optional ticket, and either `expiresAt` or `permanent: true` (admins only).
 */
const TermsBody = {
  scope: ExceptionScopeBody,
  detection: v.pipe(
    v.unknown(),
    v.check((d) => d !== null && typeof d === 'object' && !Array.isArray(d), 'expected a Sigma detection map'),
    v.transform((d) => d as Record<string, unknown>),
  ),
  reason: Reason,
  owner: Name(256),
  ticket: v.optional(Name(128)),
  expiresAt: v.optional(IsoDateTime),
  permanent: v.optional(v.boolean()),
};

/** Body of `POST /api/v1/exceptions` (and of its preview). */
export const CreateExceptionBody = v.strictObject({ ...TermsBody, fromAlertId: v.optional(Name(128)) });

/** Body of `PUT /api/v1/exceptions/{exceptionId}`: the whole new terms, and why they change. */
export const ChangeExceptionBody = v.strictObject({ ...TermsBody, comment: Reason });

/** Body of `DELETE /api/v1/exceptions/{exceptionId}`: why it ends early. */
export const RevokeExceptionBody = v.strictObject({ comment: Reason });

/** The terms of an exception as a body gives them. */
export type ExceptionTermsInput = v.InferOutput<typeof ChangeExceptionBody> | v.InferOutput<typeof CreateExceptionBody>;

/** What a decision on an exception reads. */
export interface ExceptionDecisionState {
  readonly exceptions: ExceptionsState;
  readonly detection: DetectionState;
}

/** Who is asking: a permanent exception needs an admin. */
export interface ExceptionAuthority {
  readonly mayBePermanent: boolean;
}

/** The id of a new exception: stable for its request, unique among the exceptions. */
function exceptionIdOf(s: ExceptionsState, seed: string): string {
  const base = `exc_${createHash('sha256').update(seed).digest('hex').slice(0, 16)}`;
  let id = base;
  for (let n = 2; s.exceptions.has(id); n++) id = `${base}-${n}`;
  return id;
}

/**
 * Checks an exception's terms against the rules and the clock; the issues, empty when they hold. The condition must
 * compile (for a rule scope, with that rule's field names), a rule scope must name an installed rule, and the end must
 * lie ahead, within EXCEPTION_MAX_DAYS, unless an admin makes it permanent (`end: false`: not checked, for a preview).
 */
export function exceptionTermIssues(
  state: ExceptionDecisionState,
  body: ExceptionTermsInput,
  ctx: CommandContext,
  who: ExceptionAuthority,
  checks: { readonly end: boolean } = { end: true },
): string[] {
  const issues: string[] = [];
  const rule = body.scope.kind === 'rule' ? state.detection.rules.get(body.scope.ruleId) : undefined;
  if (body.scope.kind === 'rule' && !rule) issues.push(`scope.ruleId: rule ${body.scope.ruleId} is not installed`);
  const compiled = compileExceptionCondition(body.detection, rule ? mappingFor(rule.compiled) : undefined);
  if (!compiled.ok)
    issues.push(compiled.error.startsWith('detection') ? compiled.error : `detection: ${compiled.error}`);
  if (!checks.end) return issues;
  if (body.permanent === true) {
    if (body.expiresAt !== undefined) issues.push('expiresAt: a permanent exception has no expiresAt');
    if (!who.mayBePermanent) issues.push('permanent: only an admin may make an exception permanent');
  } else if (body.expiresAt === undefined) {
    issues.push('expiresAt: required (or permanent: true, for an admin)');
  } else {
    const endMs = Date.parse(body.expiresAt);
    const nowMs = Date.parse(ctx.now);
    if (endMs <= nowMs) issues.push('expiresAt: must be in the future');
    else if (endMs - nowMs > EXCEPTION_MAX_DAYS * 86_400_000)
      issues.push(`expiresAt: at most ${EXCEPTION_MAX_DAYS} days ahead (an admin may make it permanent)`);
  }
  return issues;
}

function termsData(body: ExceptionTermsInput) {
  return {
    scope: body.scope,
    detection: body.detection,
    reason: body.reason,
    owner: body.owner,
    ...(body.ticket !== undefined ? { ticket: body.ticket } : {}),
    ...(body.expiresAt !== undefined ? { expiresAt: new Date(body.expiresAt).toISOString() } : {}),
  };
}

/** Decides creating an exception: its terms checked (exceptionTermIssues), recorded with who made it. */
export function decideCreateException(
  state: ExceptionDecisionState,
  body: v.InferOutput<typeof CreateExceptionBody>,
  ctx: CommandContext,
  who: ExceptionAuthority,
): Decision<{ id: string }> {
  if (!ctx.actor) return reject('unauthenticated', 'an exception needs an authenticated principal');
  const issues = exceptionTermIssues(state, body, ctx, who);
  if (issues.length > 0) return reject('invalid', 'invalid exception', { issues });
  const nowMs = Date.parse(ctx.now);
  let live = 0;
  for (const e of state.exceptions.exceptions.values()) if (exceptionLive(e, nowMs)) live++;
  if (live >= EXCEPTIONS_LIVE_MAX)
    return reject('conflict', `${EXCEPTIONS_LIVE_MAX} exceptions are live; revoke some before making more`);
  const exceptionId = exceptionIdOf(state.exceptions, `${ctx.requestId ?? ''}\0${ctx.now}\0${ctx.actor.id}`);
  const data: EventData<'ExceptionCreated'> = {
    exceptionId,
    ...termsData(body),
    ...(body.fromAlertId !== undefined ? { fromAlertId: body.fromAlertId } : {}),
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: 'ExceptionCreated', data }], { id: exceptionId });
}

/** Decides changing an exception's terms (a revoked one cannot change; an expired one may be renewed). */
export function decideChangeException(
  state: ExceptionDecisionState,
  exceptionId: string,
  body: v.InferOutput<typeof ChangeExceptionBody>,
  ctx: CommandContext,
  who: ExceptionAuthority,
): Decision<{ id: string }> {
  const e = state.exceptions.exceptions.get(exceptionId);
  if (!e) return reject('not_found', `exception ${exceptionId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'a change needs an authenticated principal');
  if (e.revokedAt !== undefined) return reject('conflict', `exception ${exceptionId} was revoked; create a new one`);
  const issues = exceptionTermIssues(state, body, ctx, who);
  if (issues.length > 0) return reject('invalid', 'invalid exception', { issues });
  const data: EventData<'ExceptionChanged'> = {
    exceptionId,
    ...termsData(body),
    comment: body.comment,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: 'ExceptionChanged', data }], { id: exceptionId });
}

/** Decides ending an exception early. */
export function decideRevokeException(
  state: ExceptionDecisionState,
  exceptionId: string,
  body: v.InferOutput<typeof RevokeExceptionBody>,
  ctx: CommandContext,
): Decision<{ id: string; status: 'revoked' }> {
  const e = state.exceptions.exceptions.get(exceptionId);
  if (!e) return reject('not_found', `exception ${exceptionId} does not exist`);
  if (!ctx.actor) return reject('unauthenticated', 'a revocation needs an authenticated principal');
  if (e.revokedAt !== undefined) return reject('conflict', `exception ${exceptionId} was revoked already`);
  const data: EventData<'ExceptionRevoked'> = {
    exceptionId,
    comment: body.comment,
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: 'ExceptionRevoked', data }], { id: exceptionId, status: 'revoked' });
}

/** What the scheduled exception check did. */
export interface ExceptionCheckResult {
  readonly expired: readonly string[];
  readonly reminded: readonly string[];
}

/**
 * Decides one scheduled exception check at `ctx.now`: an exception whose `expiresAt` has passed is recorded expired
 * (it stopped applying then all the same), and one that ends within `reminderMs` raises one
 * `vigil.exception-expiring` alert for its owner, once per end. Nothing to say: no events. Pure.
 */
export function decideExceptionCheck(
  state: { readonly exceptions: ExceptionsState; readonly alerts: AlertsState },
  reminderMs: number,
  ctx: CommandContext,
): Decision<ExceptionCheckResult> {
  const nowMs = Date.parse(ctx.now);
  const events: DomainEvent[] = [];
  const expired: string[] = [];
  const reminded: string[] = [];
  const raisedIds = new Set<string>();
  for (const e of state.exceptions.exceptions.values()) {
    if (e.revokedAt !== undefined || e.expiresAt === undefined) continue;
    if (!exceptionLive(e, nowMs)) {
      if (e.expiredAt !== undefined) continue;
      events.push({ type: 'ExceptionExpired', data: { exceptionId: e.id, expiresAt: e.expiresAt } });
      expired.push(e.id);
      continue;
    }
    if (e.remindedAt !== undefined || Date.parse(e.expiresAt) - nowMs > reminderMs) continue;
    let alertId = systemAlertId(state.alerts, EXCEPTION_EXPIRING_RULE, e.id, `${ctx.now}\0${e.expiresAt}`);
    for (let n = 2; raisedIds.has(alertId); n++) alertId = `${alertId}-${n}`;
    raisedIds.add(alertId);
    events.push({ type: 'ExceptionExpiryReminded', data: { exceptionId: e.id, expiresAt: e.expiresAt, alertId } });
    events.push({
      type: DetectionRecord.AlertRaised,
      data: systemAlertRaised({
        alertId,
        ruleId: EXCEPTION_EXPIRING_RULE,
        groupKey: e.id,
        title: `Exception ${e.id} (${e.reason.slice(0, 120)}) expires at ${e.expiresAt}; owner ${e.owner.slice(0, 64)}`,
        level: 'medium',
        severity: 4,
        facts: {
          exception: e.id,
          owner: e.owner,
          ticket: e.ticket ?? null,
          expiresAt: e.expiresAt,
          matchesExcepted: e.matchesExcepted,
        },
        at: ctx.now,
        tags: ['vigil.exceptions'],
      }),
    });
    reminded.push(e.id);
  }
  return accept(events, { expired, reminded });
}

/** Fields of an event that say who or where a match came from, in the order a draft from an alert names them. */
const DRAFT_FIELDS = ['actor.user', 'actor.name', 'sourceEndpoint.ip', 'sourceEndpoint.host'] as const;
/** Where a match happened, named when nothing says who or from where. */
const DRAFT_FALLBACK_FIELDS = ['destinationEndpoint.host', 'destinationEndpoint.ip', 'service.name'] as const;

function scalarAt(event: NormalizedEvent, path: string): string | number | undefined {
  let value: unknown = event;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return typeof value === 'string' || typeof value === 'number' ? value : undefined;
}

/**
 * The terms an analyst starts from when excepting an alert: its rule, a selection of who and from where its first
 * evidence event came (the user and source address; where it happened when neither is known; the rule's own matched
 * values for a built-in or an event without them), a week from now, the analyst as owner. To be read and narrowed
 * before saving, never saved as it is.
 */
export function draftFromAlert(
  alert: { readonly id: string; readonly ruleId: string; readonly matchReason: unknown },
  event: NormalizedEvent | undefined,
  owner: string,
  now: string,
): v.InferOutput<typeof CreateExceptionBody> & { expiresAt: string } {
  const selection: Record<string, string | number> = {};
  if (event) {
    for (const f of DRAFT_FIELDS) {
      const value = scalarAt(event, f);
      if (value !== undefined) selection[f] = value;
    }
    if (Object.keys(selection).length === 0)
      for (const f of DRAFT_FALLBACK_FIELDS) {
        const value = scalarAt(event, f);
        if (value !== undefined) selection[f] = value;
      }
  }
  const reason = alert.matchReason as { fields?: Array<{ field: string; value: unknown }> };
  if (Object.keys(selection).length === 0)
    for (const f of reason.fields ?? []) {
      if (typeof f.value === 'string' || typeof f.value === 'number') selection[f.field] = f.value;
    }
  return {
    scope: { kind: 'rule', ruleId: alert.ruleId },
    detection: { selection, condition: 'selection' },
    reason: '',
    owner,
    expiresAt: new Date(Date.parse(now) + 7 * 86_400_000).toISOString(),
    fromAlertId: alert.id,
  };
}
