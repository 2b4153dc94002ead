import * as v from 'valibot';
import { EXCEPTION_TERMS } from '../events/exception-events.js';
import { exceptionStatus, type ExceptionView } from './exceptions.js';

// The answers of the exception routes (src/http/routes/exceptions.ts): what docs/openapi.json publishes.

const Count = v.pipe(v.number(), v.integer());

const Terms = EXCEPTION_TERMS;

/** The states of an exception: live, past its `expiresAt`, or ended early. */
export const EXCEPTION_STATUSES = ['active', 'expired', 'revoked'] as const;

/** An exception as lists show it. */
export const ExceptionSummarySchema = v.strictObject({
  id: v.string(),
  ...Terms,
  status: v.picklist(EXCEPTION_STATUSES),
  permanent: v.boolean(),
  createdAt: v.string(),
  createdBy: v.string(),
  fromAlertId: v.optional(v.string()),
  revokedAt: v.optional(v.string()),
  expiredAt: v.optional(v.string()),
  remindedAt: v.optional(v.string()),
  matchesExcepted: Count,
  byRule: v.record(v.string(), Count),
  lastExceptedAt: v.optional(v.string()),
});

/** An exception with its whole history. */
export const ExceptionDetailSchema = v.strictObject({
  ...ExceptionSummarySchema.entries,
  history: v.array(
    v.strictObject({
      at: v.string(),
      seq: Count,
      kind: v.picklist(['created', 'changed', 'revoked', 'expired', 'reminded']),
      principal: v.optional(v.string()),
      authentication: v.optional(v.string()),
      comment: v.optional(v.string()),
      terms: v.optional(v.strictObject(Terms)),
      alertId: v.optional(v.string()),
    }),
  ),
});

/** A page of exceptions, with counts by state over all of them. */
export const ExceptionPageSchema = v.strictObject({
  exceptions: v.array(ExceptionSummarySchema),
  counts: v.strictObject({ active: Count, expiringSoon: Count, expired: Count, revoked: Count }),
  nextCursor: v.nullable(v.string()),
});

/** What a draft exception would have done to stored history. */
export const ExceptionPreviewSchema = v.strictObject({
  since: v.string(),
  until: v.string(),
  alerts: v.strictObject({ inScope: Count, removed: Count, removedIds: v.array(v.string()) }),
  matches: v.strictObject({
    scanned: Count,
    removed: Count,
    complete: v.boolean(),
    stoppedBy: v.optional(v.picklist(['events', 'time'])),
  }),
  truePositives: v.array(
    v.strictObject({ alertId: v.string(), title: v.string(), reviewedBy: v.optional(v.string()), at: v.string() }),
  ),
  warning: v.optional(v.string()),
});

/** An exception as the routes answer it at `nowMs`: its terms, state and what it kept from alerting. */
export function exceptionSummary(e: ExceptionView, nowMs: number): v.InferOutput<typeof ExceptionSummarySchema> {
  const { history: _h, ...rest } = e;
  return { ...rest, status: exceptionStatus(e, nowMs), permanent: e.expiresAt === undefined };
}

/** An exception with its history. */
export function exceptionDetail(e: ExceptionView, nowMs: number): v.InferOutput<typeof ExceptionDetailSchema> {
  return { ...exceptionSummary(e, nowMs), history: e.history };
}

/** Whether an exception ends within `withinMs` of `nowMs` (and is still live). */
export function expiringSoon(e: ExceptionView, nowMs: number, withinMs: number): boolean {
  return (
    exceptionStatus(e, nowMs) === 'active' && e.expiresAt !== undefined && Date.parse(e.expiresAt) - nowMs <= withinMs
  );
}
