import * as v from 'valibot';
import { decideAssignAlert } from '../../../commands/assign-alert.js';
import { BULK_REVIEW_MAX, decideBulkReview } from '../../../commands/bulk-review-alerts.js';
import { accept, type Decision, type DomainEvent } from '../../../commands/decision.js';
import { LEVELS } from '../../../detection/types.js';
import { HttpError } from '../../errors.js';
import { commandContext, executeAudited } from '../../request-context.js';
import { matchingAlerts, type AlertFilter } from '../../../projections/alerts-query.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES, type AlertsState, type AlertView } from '../../../projections/alerts.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { Pager, Table, type Column } from '../../web/components/table.js';
import { shortTime, someOf, withQuery } from '../../web/components/url.js';
import { assigneeField, backTo, formFields, idsField, optionalField, parseForm } from '../forms.js';
import type { PageRoute, PageScope } from '../page-route.js';
import { QueueQuery, queueFilter, queuePage, type QueueParams } from '../queries/alert-queue.js';

/** Alerts on one page of the queue. */
export const QUEUE_PAGE_SIZE = 50;

const FILTER_NAMES = ['status', 'severity', 'rule', 'entity', 'assignee', 'unassigned', 'since'] as const;

/** The queue's filters as URL parameters (what "all that match" means, carried by the bulk form). */
function filterParams(q: QueueParams): Record<string, string | undefined> {
  return Object.fromEntries(FILTER_NAMES.map((n) => [n, q[n]]));
}

/** The queue page: filters, the sortable table, paging, and (for reviewers) the selection's bulk actions. */
function QueuePage(props: {
  q: QueueParams;
  page: { alerts: AlertView[]; total: number; nextCursor: string | undefined };
  scope: PageScope;
  url: string;
}) {
  const { q, page, scope } = props;
  const reviewer = scope.can('alerts:review');
  const query = { ...filterParams(q), sort: q.sort, cursor: q.cursor };
  const columns: Column<AlertView>[] = [
    ...(reviewer
      ? [
          {
            header: '',
            class: 'pick',
            cell: (a: AlertView) => (
              <input type="checkbox" name="ids" value={a.id} form="bulk" aria-label={`select ${a.title}`} />
            ),
          },
        ]
      : []),
    { header: 'Severity', sort: 'severity', cell: (a) => <SeverityBadge severity={a.level} /> },
    { header: 'Alert', sort: 'title', cell: (a) => <a href={`/alerts/${encodeURIComponent(a.id)}`}>{a.title}</a> },
    {
      header: 'Status',
      sort: 'status',
      cell: (a) => (
        <>
          <StatusLabel status={a.status} />
          {a.disposition ? <span class="muted"> · {a.disposition.replace('_', ' ')}</span> : null}
        </>
      ),
    },
    { header: 'Assignee', sort: 'assignee', cell: (a) => a.assignee ?? <span class="muted">—</span> },
    { header: 'Systems', cell: (a) => someOf(a.affectedSystems, a.affectedSystems.length, 3) },
    { header: 'Events', class: 'num', cell: (a) => String(a.evidenceCount) },
    { header: 'Last seen', sort: 'lastSeen', cell: (a) => <time datetime={a.lastSeen}>{shortTime(a.lastSeen)}</time> },
  ];
  return (
    <>
      <h1>
        Alerts <span class="muted">({page.total} matching)</span>
      </h1>
      <FilterBar
        action="/alerts"
        values={filterParams(q)}
        keep={{ sort: q.sort }}
        fields={[
          {
            kind: 'select',
            name: 'status',
            label: 'Status',
            options: ALERT_STATUSES.map((s) => [s, s.replace('_', ' ')] as const),
          },
          { kind: 'select', name: 'severity', label: 'Severity at least', options: LEVELS.map((l) => [l, l] as const) },
          { kind: 'text', name: 'rule', label: 'Rule id' },
          { kind: 'text', name: 'entity', label: 'Entity', placeholder: 'host:web-01, ip:10.0.0.8' },
          { kind: 'text', name: 'assignee', label: 'Assignee' },
          {
            kind: 'select',
            name: 'unassigned',
            label: 'Assigned',
            options: [
              ['true', 'to nobody'],
              ['false', 'to somebody'],
            ],
          },
          { kind: 'time', name: 'since', label: 'Seen since' },
        ]}
      />
      <p class="muted">
        <a href={withQuery('/alerts', { status: 'open', assignee: scope.principal.id })}>Assigned to me</a> ·{' '}
        <a href={withQuery('/alerts', { status: 'open', unassigned: 'true' })}>Open, nobody on it</a> ·{' '}
        <a href={withQuery('/alerts', { status: 'open' })}>Open</a> ·{' '}
        <span>
          Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>x</kbd> select, <kbd>Enter</kbd> open, <kbd>/</kbd> filter.
        </span>
      </p>
      {reviewer ? (
        <form id="bulk" method="post" action="/alerts/review" class="bulk">
          <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
          <input type="hidden" name="back" value={props.url} />
          {FILTER_NAMES.map((n) => (q[n] ? <input type="hidden" name={`filter.${n}`} value={q[n]} /> : null))}
          <label>
            <span>Apply to</span>
            <select name="scope">
              <option value="selected">the selected alerts</option>
              <option value="matching">{`all ${page.total} that match the filter`}</option>
            </select>
          </label>
          <label>
            <input type="checkbox" data-select-all="ids" form="none" /> select this page
          </label>
          <label>
            <span>Status</span>
            <select name="status">
              {ALERT_STATUSES.map((s) => (
                <option value={s}>{s.replace('_', ' ')}</option>
              ))}
            </select>
          </label>
          <label>
            <span>Disposition</span>
            <select name="disposition">
              <option value="">none</option>
              {ALERT_DISPOSITIONS.map((d) => (
                <option value={d}>{d.replace('_', ' ')}</option>
              ))}
            </select>
          </label>
          <label>
            <span>Reason</span>
            <input type="text" name="reason" maxlength={4096} placeholder="why (kept in every alert's history)" />
          </label>
          <button type="submit" name="action" value="review">
            Review
          </button>
          <label>
            <span>Assignee</span>
            <input type="text" name="assignee" maxlength={128} placeholder="principal id" />
          </label>
          <button type="submit" class="secondary" formaction="/alerts/assign" name="action" value="assign">
            Assign
          </button>
          <button type="submit" class="secondary" formaction="/alerts/assign" name="me" value={scope.principal.id}>
            Assign to me
          </button>
          {scope.can('incidents:promote') ? (
            <>
              <label>
                <span>Incident title</span>
                <input type="text" name="title" maxlength={256} placeholder="for a new incident" />
              </label>
              <label>
                <span>or existing incident</span>
                <input type="text" name="incident" maxlength={128} placeholder="inc_…" />
              </label>
              <button type="submit" class="secondary" formaction="/incidents/promote">
                Promote selected to incident
              </button>
            </>
          ) : null}
        </form>
      ) : null}
      <Table
        id="queue"
        keyboard
        columns={columns}
        rows={page.alerts}
        rowKey={(a) => a.id}
        rowHref={(a) => `/alerts/${encodeURIComponent(a.id)}`}
        empty="No alert matches these filters."
        sort={{ path: '/alerts', query, current: q.sort ?? '-lastSeen' }}
      />
      <Pager path="/alerts" query={query} nextCursor={page.nextCursor} shown={page.alerts.length} total={page.total} />
    </>
  );
}

/** The alerts view, as of every write acknowledged before the request (the API's promise). */
export async function alertsState(scope: PageScope): Promise<AlertsState> {
  await scope.deps.readYourWrites();
  return scope.deps.reads.alerts;
}

const queueRoute: PageRoute = {
  method: 'get',
  path: '/alerts',
  permission: 'alerts:read',
  audit: 'console_alert_queue',
  async handle(c, scope) {
    const parsed = v.safeParse(QueueQuery, c.req.query());
    if (!parsed.success)
      throw new HttpError(
        400,
        'invalid filter',
        parsed.issues.map((i) => `${v.getDotPath(i) ?? 'query'}: ${i.message}`),
      );
    const page = queuePage(await alertsState(scope), parsed.output, QUEUE_PAGE_SIZE);
    if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor of this list and sort']);
    const url = c.req.path + new URL(c.req.url).search;
    return scope.render('Alerts', <QueuePage q={parsed.output} page={page} scope={scope} url={url} />);
  },
};

const Ids = idsField(BULK_REVIEW_MAX);
const FilterFields = {
  'filter.status': optionalField(v.picklist(ALERT_STATUSES)),
  'filter.severity': optionalField(v.picklist(LEVELS)),
  'filter.rule': optionalField(v.pipe(v.string(), v.maxLength(256))),
  'filter.entity': optionalField(v.pipe(v.string(), v.maxLength(512))),
  'filter.assignee': optionalField(v.pipe(v.string(), v.maxLength(128))),
  'filter.unassigned': optionalField(v.picklist(['true', 'false'])),
  'filter.since': optionalField(v.string()),
};

/** The bulk form: the selection (ids, or every alert matching the carried filter), the review and where to go back. */
const BulkForm = v.object({
  scope: v.optional(v.picklist(['selected', 'matching']), 'selected'),
  ids: Ids,
  ...FilterFields,
  status: v.picklist(ALERT_STATUSES),
  disposition: optionalField(v.picklist(ALERT_DISPOSITIONS)),
  reason: v.pipe(v.string(), v.trim(), v.minLength(1, 'a review needs a reason'), v.maxLength(4096)),
  back: v.optional(v.string()),
});

/** The queue filter a bulk form carried, as the projection's filter. */
function carriedFilter(f: Record<string, unknown>) {
  const parsed = v.safeParse(
    QueueQuery,
    Object.fromEntries(
      Object.entries(f)
        .filter(([k]) => k.startsWith('filter.'))
        .map(([k, x]) => [k.slice(7), x ?? '']),
    ),
  );
  if (!parsed.success)
    throw new HttpError(
      400,
      'invalid filter',
      parsed.issues.map((i) => `${v.getDotPath(i) ?? 'filter'}: ${i.message}`),
    );
  return queueFilter(parsed.output);
}

const bulkReviewRoute: PageRoute = {
  method: 'post',
  path: '/alerts/review',
  permission: 'alerts:review',
  audit: 'console_bulk_review',
  async handle(c, scope) {
    const form = parseForm(BulkForm, await formFields(c));
    const ids = form.ids ?? [];
    if (form.scope === 'selected' && ids.length === 0)
      throw new HttpError(400, 'select at least one alert, or apply to all that match the filter');
    const target: { filter: AlertFilter } | { alertIds: string[] } =
      form.scope === 'matching' ? { filter: carriedFilter(form) } : { alertIds: ids };
    const ctx = commandContext(c, scope.deps);
    const cmd = {
      ...target,
      status: form.status,
      ...(form.disposition ? { disposition: form.disposition } : {}),
      reason: form.reason,
    };
    const { result } = await executeAudited(c, scope.deps, (m) => decideBulkReview(m.alerts, cmd, ctx), 303);
    return backTo(
      c,
      form.back ?? '/alerts',
      `${result.reviewed} alert${result.reviewed === 1 ? '' : 's'} set to ${result.status.replace('_', ' ')}`,
    );
  },
};

/** The assign form: the selection and the assignee (empty clears it). */
const AssignForm = v.object({
  scope: v.optional(v.picklist(['selected', 'matching']), 'selected'),
  ids: Ids,
  ...FilterFields,
  assignee: assigneeField,
  /** Sent by the "Assign to me" button: the signed-in principal. */
  me: optionalField(v.pipe(v.string(), v.maxLength(128))),
  back: v.optional(v.string()),
});

const bulkAssignRoute: PageRoute = {
  method: 'post',
  path: '/alerts/assign',
  permission: 'alerts:review',
  audit: 'console_bulk_assign',
  async handle(c, scope) {
    const form = parseForm(AssignForm, await formFields(c));
    const ctx = commandContext(c, scope.deps);
    const assignee = form.me !== undefined ? scope.principal.id : form.assignee === '' ? null : form.assignee;
    const { result } = await executeAudited(
      c,
      scope.deps,
      (m) => {
        const alerts = m.alerts;
        // Each alert once: a repeated id would record a second assignment with a stale `from`.
        const ids =
          form.scope === 'matching'
            ? matchingAlerts(alerts, carriedFilter(form)).map((a) => a.id)
            : [...new Set(form.ids ?? [])];
        if (ids.length === 0) return accept([], 0) as Decision<number>;
        if (ids.length > BULK_REVIEW_MAX)
          return {
            ok: false,
            rejection: { kind: 'too_large', message: `at most ${BULK_REVIEW_MAX} alerts at once` },
          } as Decision<number>;
        const events: DomainEvent[] = [];
        for (const id of ids) {
          const d = decideAssignAlert(alerts, id, { assignee }, ctx);
          if (!d.ok) return d;
          events.push(...d.events);
        }
        return accept(events, ids.length);
      },
      303,
    );
    return backTo(
      c,
      form.back ?? '/alerts',
      `${result} alert${result === 1 ? '' : 's'} ${assignee ? `assigned to ${assignee}` : 'unassigned'}`,
    );
  },
};

/** Alert and queue pages: the queue, and the bulk review and assignment of a selection. */
export const alertQueuePages: readonly PageRoute[] = [queueRoute, bulkReviewRoute, bulkAssignRoute];
