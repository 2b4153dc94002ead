import { RETENTION, type RetentionState } from '../../projections/retention.js';
import * as v from 'valibot';
import { ReviewAlertBody, decideReviewAlert } from '../../commands/review-alert.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES } from '../../projections/alerts.js';
import {
  ALERT_SORTS,
  alertDetail,
  alertTimeline,
  listAlerts,
  namesPage,
  timelinePage,
} from '../../projections/alerts-query.js';
import {
  AlertDetailSchema,
  AlertPageSchema,
  AlertStatusAnswer,
  AssigneeAnswer,
  AlertTimelineEntrySchema,
} from '../../projections/alerts-answers.js';
import { incidentRoutes } from './incidents.js';
import { alertsView, ownedListRoute, ruleFilter } from './alert-lists.js';
import { AssignAlertBody, decideAssignAlert } from '../../commands/assign-alert.js';
import { AddAlertNoteBody, decideAddAlertNote } from '../../commands/add-alert-note.js';
import { BulkReviewBody, decideBulkReview } from '../../commands/bulk-review-alerts.js';
import { readJsonBody } from '../body.js';
import { HttpError, parseOr400 } from '../errors.js';
import { canonicalIso, QueryCursor, QueryLimit } from '../query.js';
import { commandContext, executeAudited } from '../request-context.js';
import { route, type Route } from '../route.js';
import { runTargeted } from '../alerts-command.js';
import { storedJson } from '../stored-json.js';

/** Query of `GET /api/v1/alerts`. */
export const ListAlertsQuery = v.strictObject({
  status: v.optional(v.picklist(ALERT_STATUSES)),
  minSeverity: v.optional(
    v.pipe(v.string(), v.regex(/^(10|\d)(\.\d+)?$/, 'expected a number 0..10'), v.transform(Number)),
  ),
  /**
   * A rule's id, or its title or Sigma `name` (case aside: every rule of that title); a rule known by none of these
   * is a 400, not an empty list.
   */
  rule: v.optional(v.pipe(v.string(), v.maxLength(256))),
  entity: v.optional(v.pipe(v.string(), v.maxLength(512))),
  assignee: v.optional(v.pipe(v.string(), v.maxLength(128))),
  /** `true`: only alerts nobody is assigned to; `false`: only assigned ones. */
  unassigned: v.optional(
    v.pipe(
      v.picklist(['true', 'false']),
      v.transform((x) => x === 'true'),
    ),
  ),
  since: v.optional(IsoDateTime),
  /** Only the alerts in this incident. */
  incident: v.optional(v.pipe(v.string(), v.maxLength(128))),
  /** The order, descending: `lastSeen` (default), `firstSeen` or `severity`. */
  sort: v.optional(v.picklist(ALERT_SORTS)),
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
});

/** Path of `/api/v1/alerts/{alertId}`: an alert id (an unknown one is a 404). */
export const AlertIdParams = v.object({ alertId: v.string() });

const listAlertsRoute = route({
  method: 'get',
  path: '/api/v1/alerts',
  operationId: 'listAlerts',
  summary: 'Alerts, most recently seen first',
  permission: 'alerts:read',
  audit: 'list_alerts',
  query: ListAlertsQuery,
  success: { status: 200, description: '`{alerts, nextCursor}`', schema: AlertPageSchema },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(ListAlertsQuery, c.req.query(), 'query');
    const s = await alertsView(deps);
    const page = listAlerts(
      s,
      {
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.minSeverity !== undefined ? { minSeverity: q.minSeverity } : {}),
        ...(q.rule !== undefined ? ruleFilter(s, deps.reads.detection.rules, q.rule) : {}),
        ...(q.entity !== undefined ? { entity: q.entity } : {}),
        ...(q.assignee !== undefined ? { assignee: q.assignee } : {}),
        ...(q.unassigned !== undefined ? { unassigned: q.unassigned } : {}),
        ...(q.since !== undefined ? { since: canonicalIso(q.since) } : {}),
        ...(q.incident !== undefined ? { incident: q.incident } : {}),
      },
      Math.min(q.limit ?? 100, deps.config.limits.pageSize),
      q.cursor,
      q.sort,
    );
    if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    return c.json(page);
  },
});

const readAlertRoute = route({
  method: 'get',
  path: '/api/v1/alerts/{alertId}',
  operationId: 'readAlert',
  summary:
    'Alert detail: match reason, evidence, affected systems, confidence, review history, assignee, notes and the ' +
    'timeline of all three (the newest 200 of each, with `historyTotals`)',
  permission: 'alerts:read',
  audit: 'read_alert',
  params: AlertIdParams,
  success: { status: 200, description: 'Alert', schema: AlertDetailSchema },
  errors: [404],
  handle: async (c, { deps }) => {
    const alert = (await alertsView(deps)).alerts.get(c.req.param('alertId'));
    if (!alert) throw new HttpError(404, `alert ${c.req.param('alertId').slice(0, 128)} does not exist`);
    // Evidence a retention cut archived still reads from the alert's references, marked with its archive.
    const archived = deps.reads.retention.archivedEvidence;
    const evidence =
      archived.size === 0
        ? alert.evidence
        : alert.evidence.map((ref) => {
            const file = archived.get(ref.eventId);
            return file === undefined ? ref : { ...ref, archived: { file } };
          });
    return storedJson(c, { ...alertDetail(alert), evidence });
  },
});

const readAlertTimelineRoute = ownedListRoute({
  owner: 'alert',
  part: 'timeline',
  field: 'entries',
  operationId: 'readAlertTimeline',
  summary: "An alert's whole timeline (reviews, assignments and notes), oldest first, a page at a time",
  page: (_s, alert, limit, cursor) => timelinePage(alertTimeline(alert), limit, cursor),
  item: AlertTimelineEntrySchema,
});

const readAlertSystemsRoute = ownedListRoute({
  owner: 'alert',
  part: 'systems',
  field: 'affectedSystems',
  operationId: 'listAlertSystems',
  summary:
    "An alert's affected systems in the order its evidence brought them, a page at a time (its detail carries the " +
    'first 200)',
  page: (_s, alert, limit, cursor) => namesPage(alert.affectedSystems, limit, cursor),
  item: v.string(),
  // Whether the pages hold every system the alert's evidence named (docs/detections.md: at most 10,000 are kept).
  alongside: {
    field: 'affectedSystemsComplete',
    schema: v.boolean(),
    of: (alert) => alert.affectedSystemsComplete,
  },
});

const reviewAlertRoute = route({
  method: 'patch',
  path: '/api/v1/alerts/{alertId}',
  operationId: 'reviewAlert',
  summary: 'Set an alert status with a reason; appends to the review history',
  permission: 'alerts:review',
  audit: 'review_alert',
  params: AlertIdParams,
  body: { json: ReviewAlertBody },
  success: { status: 200, description: '`{id, status}`', schema: AlertStatusAnswer },
  errors: [400, 404, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'alertId', ReviewAlertBody, decideReviewAlert, 200);
    return c.json(result, 200);
  },
});

const assignAlertRoute = route({
  method: 'put',
  path: '/api/v1/alerts/{alertId}/assignee',
  operationId: 'assignAlert',
  summary: 'Assign an alert to a principal (`assignee`), or unassign it (`null`); recorded in its timeline',
  permission: 'alerts:review',
  audit: 'assign_alert',
  params: AlertIdParams,
  body: { json: AssignAlertBody },
  success: { status: 200, description: '`{id, assignee}`', schema: AssigneeAnswer },
  errors: [400, 404, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'alertId', AssignAlertBody, decideAssignAlert, 200);
    return c.json(result, 200);
  },
});

const addAlertNoteRoute = route({
  method: 'post',
  path: '/api/v1/alerts/{alertId}/notes',
  operationId: 'addAlertNote',
  summary: 'Add a note to an alert; recorded in its timeline with who wrote it',
  permission: 'alerts:review',
  audit: 'add_alert_note',
  params: AlertIdParams,
  body: { json: AddAlertNoteBody },
  success: {
    status: 201,
    description: '`{alertId, noteId}`',
    schema: v.strictObject({ alertId: v.string(), noteId: v.string() }),
  },
  errors: [400, 404, 413, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'alertId', AddAlertNoteBody, decideAddAlertNote, 201);
    return c.json(result, 201);
  },
});

const bulkReviewRoute = route({
  method: 'post',
  path: '/api/v1/alerts/reviews',
  operationId: 'bulkReviewAlerts',
  summary:
    'Review many alerts at once (by ids or by filter, at most 10,000): a status, a disposition, a reason; one ' +
    'history entry per alert',
  permission: 'alerts:review',
  audit: 'bulk_review_alerts',
  body: { json: BulkReviewBody },
  success: {
    status: 200,
    description: '`{reviewed, status, disposition, alertIds}`',
    schema: v.strictObject({
      reviewed: v.pipe(v.number(), v.integer()),
      status: v.picklist(ALERT_STATUSES),
      disposition: v.nullable(v.picklist(ALERT_DISPOSITIONS)),
      alertIds: v.array(v.string()),
    }),
  },
  errors: [400, 413, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(BulkReviewBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const f = body.filter;
    // A rule name resolves on the read side as of this request; the ids it names are what the review records.
    const rule =
      f?.rule !== undefined
        ? ruleFilter(await alertsView(deps), deps.reads.detection.rules, f.rule, 'filter.rule')
        : undefined;
    const filter = f && {
      ...(f.status !== undefined ? { status: f.status } : {}),
      ...(f.minSeverity !== undefined ? { minSeverity: f.minSeverity } : {}),
      ...rule,
      ...(f.entity !== undefined ? { entity: f.entity } : {}),
      ...(f.assignee !== undefined ? { assignee: f.assignee } : {}),
      ...(f.unassigned !== undefined ? { unassigned: f.unassigned } : {}),
      ...(f.since !== undefined ? { since: canonicalIso(f.since) } : {}),
    };
    const cmd = {
      ...(body.alertIds ? { alertIds: body.alertIds } : {}),
      ...(filter ? { filter } : {}),
      status: body.status,
      ...(body.disposition ? { disposition: body.disposition } : {}),
      reason: body.reason,
    };
    const ctx = commandContext(c, deps);
    const { result } = await executeAudited(c, deps, (m) => decideBulkReview(m.alerts, cmd, ctx), 200);
    return c.json(result, 200);
  },
});

/** Alert routes, then the incident routes (src/http/routes/incidents.ts), in documentation order. */
export const alertRoutes: readonly Route[] = [
  listAlertsRoute,
  readAlertRoute,
  readAlertTimelineRoute,
  readAlertSystemsRoute,
  reviewAlertRoute,
  assignAlertRoute,
  addAlertNoteRoute,
  bulkReviewRoute,
  ...incidentRoutes,
];
