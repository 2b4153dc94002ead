import * as v from 'valibot';
import type { Context } from 'hono';
import { alertsExcepted, draftException } from '../../commands/alerting/exception-preview.js';
import { previewRuleSet } from '../../commands/alerting/rule-preview.js';
import {
  ChangeExceptionBody,
  CreateExceptionBody,
  RevokeExceptionBody,
  decideChangeException,
  decideCreateException,
  decideRevokeException,
  draftFromAlert,
  exceptionTermIssues,
  type ExceptionTermsInput,
} from '../../commands/exceptions.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { epochMillisOf } from '../../kernel/time.js';
import { decodeCursor, encodeCursor } from '../../projections/cursor.js';
import { lookupEvent } from '../../projections/evidence.js';
import {
  EXCEPTION_STATUSES,
  ExceptionDetailSchema,
  ExceptionPageSchema,
  ExceptionPreviewSchema,
  exceptionDetail,
  exceptionSummary,
  expiringSoon,
} from '../../projections/exception-answers.js';
import { exceptionHolds, scopeCovers, type ExceptionTerms, type ExceptionView } from '../../projections/exceptions.js';
import { readJsonBody } from '../body.js';
import type { AppDeps, AppEnv } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { QueryCursor, QueryLimit } from '../query.js';
import { commandContext, executeAudited } from '../request-context.js';
import { route, type Route } from '../route.js';
import { runPreview } from '../rule-previews.js';

/** Path of `/api/v1/exceptions/{exceptionId}`. */
const ExceptionIdParams = v.object({ exceptionId: v.string() });

/** Query of `GET /api/v1/exceptions`. */
export const ListExceptionsQuery = v.strictObject({
  /** `active`, `expired`, `revoked`, or `expiring` (active and ending within the reminder window). */
  status: v.optional(v.picklist([...EXCEPTION_STATUSES, 'expiring'])),
  /** Only exceptions whose scope covers this installed rule (by id). */
  rule: v.optional(v.pipe(v.string(), v.maxLength(256))),
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
});

/** Query of `POST /api/v1/exceptions/preview`: the history it is tried on (default: the last 30 days). */
export const ExceptionPreviewQuery = v.strictObject({
  since: v.optional(IsoDateTime),
  until: v.optional(IsoDateTime),
});

/** How far back a preview looks by default. */
const PREVIEW_DAYS = 30;

const IdAnswer = v.strictObject({ id: v.string() });

/** A draft from an alert: a body for `POST /api/v1/exceptions` whose `reason` is still to be written. */
const DraftAnswer = v.strictObject({ ...CreateExceptionBody.entries, reason: v.string() });

async function readModels(deps: AppDeps) {
  await deps.readYourWrites();
  return deps.reads;
}

/** Whether the request's principal may make an exception permanent: admins only. */
const authorityOf = (c: Context<AppEnv>) => ({ mayBePermanent: c.get('principal')?.roles.includes('admin') === true });

const reminderMsOf = (deps: AppDeps) => deps.config.detection.exceptionReminderHours * 3_600_000;

const listExceptionsRoute = route({
  method: 'get',
  path: '/api/v1/exceptions',
  operationId: 'listExceptions',
  summary: 'Exceptions, newest first, with counts by state (active, expiring soon, expired, revoked)',
  permission: 'rules:read',
  audit: 'list_exceptions',
  query: ListExceptionsQuery,
  success: { status: 200, description: '`{exceptions, counts, nextCursor}`', schema: ExceptionPageSchema },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(ListExceptionsQuery, c.req.query(), 'query');
    const reads = await readModels(deps);
    const nowMs = deps.now().getTime();
    const within = reminderMsOf(deps);
    const all = [...reads.exceptions.exceptions.values()].reverse();
    const counts = { active: 0, expiringSoon: 0, expired: 0, revoked: 0 };
    for (const e of all) {
      const s = exceptionSummary(e, nowMs).status;
      counts[s] += 1;
      if (expiringSoon(e, nowMs, within)) counts.expiringSoon += 1;
    }
    const rule = q.rule !== undefined ? reads.detection.rules.get(q.rule)?.compiled : undefined;
    if (q.rule !== undefined && !rule) throw new HttpError(400, 'invalid query', [`rule: ${q.rule} is not installed`]);
    const wanted = all.filter(
      (e) =>
        (q.status === undefined ||
          (q.status === 'expiring'
            ? expiringSoon(e, nowMs, within)
            : exceptionSummary(e, nowMs).status === q.status)) &&
        (rule === undefined || scopeCovers(e.scope, rule)),
    );
    let start = 0;
    if (q.cursor !== undefined) {
      const after = decodeCursor<unknown>(q.cursor);
      start = wanted.findIndex((e) => e.id === after) + 1;
      if (start === 0) throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    }
    const limit = Math.min(q.limit ?? 100, deps.config.limits.pageSize);
    const page = wanted.slice(start, start + limit);
    return c.json({
      exceptions: page.map((e) => exceptionSummary(e, nowMs)),
      counts,
      nextCursor: start + limit < wanted.length ? encodeCursor(page.at(-1)!.id) : null,
    });
  },
});

const createExceptionRoute = route({
  method: 'post',
  path: '/api/v1/exceptions',
  operationId: 'createException',
  summary:
    'Except matching events from alerting: a Sigma detection condition scoped to a rule, a tag or all rules, with ' +
    'reason, owner, ticket and expiresAt (permanent: admins only)',
  permission: 'exceptions:write',
  audit: 'create_exception',
  body: { json: CreateExceptionBody },
  success: { status: 201, description: '`{id}`', schema: IdAnswer },
  errors: [400, 409, 413, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(CreateExceptionBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const who = authorityOf(c);
    const { result } = await executeAudited(c, deps, (m) => decideCreateException(m, body, ctx, who), 201);
    return c.json(result, 201);
  },
});

const readExceptionRoute = route({
  method: 'get',
  path: '/api/v1/exceptions/{exceptionId}',
  operationId: 'readException',
  summary: 'An exception: its terms, state, matches it kept from alerting (in all and by rule) and its whole history',
  permission: 'rules:read',
  audit: 'read_exception',
  params: ExceptionIdParams,
  success: { status: 200, description: 'Exception', schema: ExceptionDetailSchema },
  errors: [404],
  handle: async (c, { deps }) => {
    const e = (await readModels(deps)).exceptions.exceptions.get(c.req.param('exceptionId'));
    if (!e) throw new HttpError(404, `exception ${c.req.param('exceptionId').slice(0, 128)} does not exist`);
    return c.json(exceptionDetail(e, deps.now().getTime()));
  },
});

const changeExceptionRoute = route({
  method: 'put',
  path: '/api/v1/exceptions/{exceptionId}',
  operationId: 'changeException',
  summary: "Replace an exception's terms (renew an expired one), with a comment; recorded in its history",
  permission: 'exceptions:write',
  audit: 'change_exception',
  params: ExceptionIdParams,
  body: { json: ChangeExceptionBody },
  success: { status: 200, description: '`{id}`', schema: IdAnswer },
  errors: [400, 404, 409, 413, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(ChangeExceptionBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const who = authorityOf(c);
    const id = c.req.param('exceptionId');
    const { result } = await executeAudited(c, deps, (m) => decideChangeException(m, id, body, ctx, who), 200);
    return c.json(result, 200);
  },
});

const revokeExceptionRoute = route({
  method: 'post',
  path: '/api/v1/exceptions/{exceptionId}/revoke',
  operationId: 'revokeException',
  summary: 'End an exception before its time, with a comment; matches alert again from then on',
  permission: 'exceptions:write',
  audit: 'revoke_exception',
  params: ExceptionIdParams,
  body: { json: RevokeExceptionBody },
  success: {
    status: 200,
    description: '`{id, status}`',
    schema: v.strictObject({ id: v.string(), status: v.literal('revoked') }),
  },
  errors: [400, 404, 409, 413, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(RevokeExceptionBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const id = c.req.param('exceptionId');
    const { result } = await executeAudited(c, deps, (m) => decideRevokeException(m, id, body, ctx), 200);
    return c.json(result, 200);
  },
});

/** The terms of a body, as the matchers read them. */
function termsOf(body: ExceptionTermsInput): ExceptionTerms {
  return {
    scope: body.scope,
    detection: body.detection,
    reason: body.reason,
    owner: body.owner,
    ...(body.expiresAt !== undefined ? { expiresAt: body.expiresAt } : {}),
  };
}

/**
 * What a draft exception would have removed from the stored history of a time range: the alerts of covered rules whose
 * every evidence event it holds on (and of those, the ones reviewed `true_positive`, as a warning), and the matches
 * the covered rules would have made (run again over the stored events, as a rule preview does) that it holds on.
 */
export async function previewException(
  deps: AppDeps,
  body: ExceptionTermsInput,
  range: { since: string; until: string },
): Promise<v.InferOutput<typeof ExceptionPreviewSchema>> {
  const reads = await readModels(deps);
  const sinceMs = epochMillisOf(range.since)!;
  const untilMs = epochMillisOf(range.until)!;
  const terms = termsOf(body);
  const decoded = new Map();
  const find = (id: string) => lookupEvent(reads, id, decoded);
  const rules = reads.detection.rules;
  const alerts = alertsExcepted(reads.alerts, rules, terms, find, sinceMs, untilMs);
  const truePositives = alerts.removed
    .filter((a) => a.disposition === 'true_positive')
    .map((a) => {
      const review = a.reviewHistory.findLast((r) => r.disposition === 'true_positive');
      return {
        alertId: a.id,
        title: a.title,
        ...(review ? { reviewedBy: review.principal } : {}),
        at: review?.at ?? a.lastSeen,
      };
    });
  const covered = [...rules.values()].filter((r) => r.enabled && scopeCovers(terms.scope, r.compiled));
  const { state, view } = draftException(terms);
  const ruleOf = new Map(covered.map((r) => [r.id, r.compiled]));
  const matches =
    covered.length === 0
      ? { scanned: 0, matchCount: 0, complete: true }
      : await runPreview(
          deps,
          previewRuleSet(
            covered.map((r) => r.compiled),
            new Map([...rules.values()].map((r) => [r.id, r.compiled])),
          ),
          (r) => rules.get(r.id)!.doc,
          covered.map((r) => r.id),
          { ...range, sinceMs, untilMs },
          { maxEvents: 1_000_000, maxMatches: 0 },
          (m, chunk) => {
            const events = m.eventIds.map((id) => chunk.get(id) ?? find(id));
            if (events.some((e) => e === undefined)) return false;
            return exceptionHolds(state, view as ExceptionView, ruleOf.get(m.ruleId)!, events as never);
          },
        );
  return {
    since: range.since,
    until: range.until,
    alerts: {
      inScope: alerts.inScope,
      removed: alerts.removed.length,
      removedIds: alerts.removed.slice(0, 100).map((a) => a.id),
    },
    matches: {
      scanned: matches.scanned,
      removed: matches.matchCount,
      complete: matches.complete,
      ...('stoppedBy' in matches && matches.stoppedBy ? { stoppedBy: matches.stoppedBy } : {}),
    },
    truePositives,
    ...(truePositives.length > 0
      ? {
          warning:
            `${truePositives.length} of the alerts this exception would have removed were reviewed true_positive: ` +
            truePositives
              .slice(0, 10)
              .map((t) => t.alertId)
              .join(', '),
        }
      : {}),
  };
}

/** The range of a preview query: `since` defaults to PREVIEW_DAYS before `until`, which defaults to now. */
export function previewRange(deps: AppDeps, q: v.InferOutput<typeof ExceptionPreviewQuery>) {
  const until = q.until ?? deps.now().toISOString();
  const since = q.since ?? new Date(Date.parse(until) - PREVIEW_DAYS * 86_400_000).toISOString();
  if (Date.parse(until) < Date.parse(since)) throw new HttpError(400, 'invalid query', ['until: before since']);
  return { since, until };
}

const previewExceptionRoute = route({
  method: 'post',
  path: '/api/v1/exceptions/preview',
  operationId: 'previewException',
  summary:
    'Before saving: how many stored alerts and matches a draft exception would have removed, warning of any ' +
    'reviewed true_positive; records nothing',
  permission: 'exceptions:write',
  audit: 'preview_exception',
  query: ExceptionPreviewQuery,
  body: { json: CreateExceptionBody },
  success: { status: 200, description: 'ExceptionPreview', schema: ExceptionPreviewSchema },
  errors: [400, 413, 415, 429],
  handle: async (c, { deps }) => {
    const q = parseOr400(ExceptionPreviewQuery, c.req.query(), 'query');
    const body = parseOr400(CreateExceptionBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const reads = await readModels(deps);
    // The same checks as saving but the end: a draft may be previewed before its end is chosen.
    const issues = exceptionTermIssues(reads, body, commandContext(c, deps), { mayBePermanent: true }, { end: false });
    if (issues.length > 0) throw new HttpError(400, 'invalid exception', issues);
    return c.json(await previewException(deps, body, previewRange(deps, q)));
  },
});

const draftFromAlertRoute = route({
  method: 'get',
  path: '/api/v1/alerts/{alertId}/exception-draft',
  operationId: 'draftExceptionFromAlert',
  summary:
    'An exception prefilled from an alert (its rule; who and from where its first evidence came; a week), to edit ' +
    'and post to /api/v1/exceptions',
  permission: 'rules:read',
  audit: 'draft_exception',
  params: v.object({ alertId: v.string() }),
  success: { status: 200, description: 'a body for POST /api/v1/exceptions', schema: DraftAnswer },
  errors: [404],
  handle: async (c, { deps }) => {
    const reads = await readModels(deps);
    const alert = reads.alerts.alerts.get(c.req.param('alertId'));
    if (!alert) throw new HttpError(404, `alert ${c.req.param('alertId').slice(0, 128)} does not exist`);
    const first = alert.evidence[0];
    const event = first ? lookupEvent(reads, first.eventId) : undefined;
    return c.json(draftFromAlert(alert, event, c.get('principal')?.id ?? '', deps.now().toISOString()));
  },
});

/** Exception routes (`/api/v1/exceptions`), in documentation order. */
export const exceptionRoutes: readonly Route[] = [
  listExceptionsRoute,
  previewExceptionRoute,
  createExceptionRoute,
  readExceptionRoute,
  changeExceptionRoute,
  revokeExceptionRoute,
  draftFromAlertRoute,
];
