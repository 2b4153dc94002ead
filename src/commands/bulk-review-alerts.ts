import * as v from 'valibot';
import { IsoDateTime } from '../events/normalized-event.js';
import { DetectionRecord, type AlertsBulkReviewed } from '../events/detection-records.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES, type AlertsState } from '../projections/alerts.js';
import { matchingAlerts, type AlertFilter } from '../projections/alerts-query.js';
import { Reason } from './review-alert.js';
import { accept, reject, type CommandContext, type Decision } from './decision.js';

/** The most alerts one bulk review may change, by ids or by filter; past it the review is refused (413). */
export const BULK_REVIEW_MAX = 10_000;

/** The filter of a bulk review: the filters of `GET /api/v1/alerts`, meaning "every alert that matches". */
export const BulkReviewFilter = v.strictObject({
  status: v.optional(v.picklist(ALERT_STATUSES)),
  minSeverity: v.optional(v.pipe(v.number(), v.minValue(0), v.maxValue(10))),
  rule: v.optional(v.pipe(v.string(), v.maxLength(256))),
  entity: v.optional(v.pipe(v.string(), v.maxLength(512))),
  assignee: v.optional(v.pipe(v.string(), v.maxLength(128))),
  unassigned: v.optional(v.boolean()),
  since: v.optional(IsoDateTime),
});

/**
 * Body of `POST /api/v1/alerts/reviews`: the alerts (by `alertIds` or by `filter`, exactly one), the status, an
 * optional disposition, the reason.
 */
export const BulkReviewBody = v.pipe(
  v.strictObject({
    alertIds: v.optional(
      v.pipe(
        v.array(v.pipe(v.string(), v.minLength(1), v.maxLength(128))),
        v.minLength(1),
        v.maxLength(BULK_REVIEW_MAX, `at most ${BULK_REVIEW_MAX} alerts in one review`),
      ),
    ),
    filter: v.optional(BulkReviewFilter),
    status: v.picklist(ALERT_STATUSES),
    disposition: v.optional(v.picklist(ALERT_DISPOSITIONS)),
    reason: Reason,
  }),
  v.check(
    (b) => (b.alertIds === undefined) !== (b.filter === undefined),
    'name the alerts by alertIds or by filter (exactly one)',
  ),
);

/** A bulk review as the decider takes it: the filter already in the projection's terms. */
export interface BulkReview {
  readonly alertIds?: readonly string[];
  readonly filter?: AlertFilter;
  readonly status: AlertsBulkReviewed['to'];
  readonly disposition?: AlertsBulkReviewed['disposition'];
  readonly reason: string;
}

/** The answer of a bulk review: how many alerts, which, and what they became. */
export interface BulkReviewResult {
  reviewed: number;
  status: string;
  disposition: string | null;
  alertIds: string[];
}

/**
 * Decides a bulk review: the named alerts (each must exist) or every alert matching the filter at
 * the time of the decision, at most BULK_REVIEW_MAX. One event records them all, each with the
 * status it had, so each alert's history gets its own entry and the log one record.
 */
export function decideBulkReview(
  alerts: AlertsState,
  cmd: BulkReview,
  ctx: CommandContext,
): Decision<BulkReviewResult> {
  if (!ctx.actor) return reject('unauthenticated', 'a review needs an authenticated principal');
  let ids: string[];
  if (cmd.alertIds !== undefined) {
    ids = [...new Set(cmd.alertIds)];
    const missing = ids.filter((id) => !alerts.alerts.has(id));
    if (missing.length > 0)
      return reject('invalid', 'unknown alerts', {
        issues: missing.slice(0, 50).map((id) => `alertIds: ${id} does not exist`),
      });
  } else if (cmd.filter !== undefined) {
    ids = matchingAlerts(alerts, cmd.filter).map((a) => a.id);
  } else return reject('invalid', 'name the alerts by alertIds or by filter (exactly one)');
  if (ids.length > BULK_REVIEW_MAX) {
    return reject(
      'too_large',
      `the filter matches ${ids.length} alerts; one review changes at most ${BULK_REVIEW_MAX}: narrow the filter ` +
        `(status, minSeverity, rule, entity, assignee, unassigned, since)`,
      { details: { matched: ids.length, limit: BULK_REVIEW_MAX } },
    );
  }
  const result: BulkReviewResult = {
    reviewed: ids.length,
    status: cmd.status,
    disposition: cmd.disposition ?? null,
    alertIds: ids,
  };
  if (ids.length === 0) return accept([], result);
  const data: AlertsBulkReviewed = {
    reviews: ids.map((alertId) => ({ alertId, from: alerts.alerts.get(alertId)!.status })),
    to: cmd.status,
    ...(cmd.disposition !== undefined ? { disposition: cmd.disposition } : {}),
    reason: cmd.reason,
    ...(cmd.filter !== undefined ? { filter: filterRecord(cmd.filter) } : {}),
    principal: ctx.actor.id,
    authentication: ctx.actor.authentication,
  };
  return accept([{ type: DetectionRecord.AlertsBulkReviewed, data }], result);
}

/** The filter as stored with the review (for the auditor: what "all that match" meant). */
function filterRecord(f: AlertFilter): Record<string, string | number> {
  const out: Record<string, string | number> = {};
  for (const [k, val] of Object.entries(f))
    if (val !== undefined)
      out[k] = typeof val === 'boolean' ? String(val) : Array.isArray(val) ? val.join(',') : (val as string | number);
  return out;
}
