import * as v from 'valibot';
import { AddIncidentAlertsBody, decideAddIncidentAlerts } from '../../../commands/add-incident-alerts.js';
import { decideAssignIncident } from '../../../commands/assign-incident.js';
import { ChangeIncidentStatusBody, decideIncidentStatus } from '../../../commands/change-incident-status.js';
import { MergeIncidentBody, decideMergeIncident } from '../../../commands/merge-incidents.js';
import { HttpError } from '../../errors.js';
import { commandContext, executeAudited } from '../../request-context.js';
import { BULK_REVIEW_MAX, decideBulkReview } from '../../../commands/bulk-review-alerts.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES, INCIDENT_STATUSES } from '../../../projections/alerts.js';
import { EntityKey, EntityKeys } from '../../web/components/entity-key.js';
import {
  HISTORY_SHOWN,
  incidentAlertsPage,
  incidentDetail,
  listIncidents,
  namesPage,
  timelinePage,
  type IncidentAlertLine,
  type IncidentListItem,
} from '../../../projections/alerts-query.js';
import type { AlertsState, IncidentTimelineEntry, IncidentView } from '../../../projections/alerts.js';
import { cursorOf, listPage, More, type ShownPage } from './paged-list.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { Table } from '../../web/components/table.js';
import { ReviewChoices } from '../../web/components/review-choices.js';
import { Timeline } from '../../web/components/timeline.js';
import { shortTime } from '../../web/components/url.js';
import { assigneeField, backTo, formFields, idsField, optionalField, parseForm } from '../forms.js';
import type { PageRoute, PageScope } from '../page-route.js';
import { alertsState } from './alerts.js';

/** Incidents listed at most (most recently active first). */
const INCIDENTS_LISTED = 500;

/** The Sigma level name of a 0..10 severity, for its badge. */
export function levelOf(severity: number): string {
  return severity >= 10
    ? 'critical'
    : severity >= 8
      ? 'high'
      : severity >= 5
        ? 'medium'
        : severity >= 3
          ? 'low'
          : 'informational';
}

const ListQuery = v.object({ status: optionalField(v.picklist([...INCIDENT_STATUSES, 'merged'])) });

const listRoute: PageRoute = {
  method: 'get',
  path: '/incidents',
  permission: 'incidents:read',
  audit: 'console_incidents',
  async handle(c, scope) {
    const parsed = v.safeParse(ListQuery, c.req.query());
    if (!parsed.success) throw new HttpError(400, 'invalid filter');
    const rows = listIncidents(await alertsState(scope), INCIDENTS_LISTED, parsed.output.status);
    return scope.render(
      'Incidents',
      <>
        <h1>
          Incidents <span class="muted">({rows.length})</span>
        </h1>
        <FilterBar
          action="/incidents"
          values={{ status: parsed.output.status }}
          fields={[
            {
              kind: 'select',
              name: 'status',
              label: 'Status',
              options: [...INCIDENT_STATUSES, 'merged'].map((s) => [s, s] as const),
            },
          ]}
        />
        <Table<IncidentListItem>
          id="incidents"
          keyboard
          rows={rows}
          rowKey={(i) => i.id}
          rowHref={(i) => `/incidents/${encodeURIComponent(i.id)}`}
          empty="No incident."
          columns={[
            { header: 'Severity', cell: (i) => <SeverityBadge severity={levelOf(i.severity)} /> },
            { header: 'Incident', cell: (i) => <a href={`/incidents/${encodeURIComponent(i.id)}`}>{i.title}</a> },
            { header: 'Status', cell: (i) => <StatusLabel status={i.status} /> },
            { header: 'Assignee', cell: (i) => i.assignee ?? '—' },
            { header: 'Origin', cell: (i) => i.origin },
            { header: 'Alerts', class: 'num', cell: (i) => `${i.alertsOpen}/${i.totals.alerts} open` },
            { header: 'Entities', cell: (i) => <EntityKeys keys={i.entities} shown={4} total={i.totals.entities} /> },
            { header: 'Last activity', cell: (i) => shortTime(i.lastSeen) },
          ]}
        />
      </>,
    );
  },
};

/** The incident's actions for a principal who may promote: status, assignee, more alerts, merge. */
function IncidentActions(props: {
  readonly id: string;
  readonly status: string;
  readonly assignee: string | undefined;
  readonly scope: PageScope;
}) {
  const { id, scope } = props;
  if (!scope.can('incidents:promote') || props.status === 'merged') return null;
  const base = `/incidents/${encodeURIComponent(id)}`;
  const csrf = <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />;
  return (
    <section class="actions" aria-label="Actions">
      <form method="post" action={`${base}/status`}>
        {csrf}
        <label>
          <span>Status</span>
          <select name="status">
            {INCIDENT_STATUSES.map((s) => (
              <option value={s} selected={s === props.status}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          <span>Reason</span>
          <input type="text" name="reason" required maxlength={4096} />
        </label>
        <button type="submit">Set status</button>
      </form>
      <form method="post" action={`${base}/assign`}>
        {csrf}
        <label>
          <span>Assignee</span>
          <input type="text" name="assignee" value={props.assignee ?? ''} maxlength={128} placeholder="empty: nobody" />
        </label>
        <button type="submit" class="secondary">
          Assign
        </button>
        <button type="submit" class="secondary" name="me" value={scope.principal.id}>
          Assign to me
        </button>
      </form>
      <form method="post" action={`${base}/alerts`}>
        {csrf}
        <label>
          <span>Add alerts (ids, comma-separated)</span>
          <input type="text" name="ids" required maxlength={65536} />
        </label>
        <label>
          <span>Reason</span>
          <input type="text" name="reason" required maxlength={4096} />
        </label>
        <button type="submit" class="secondary">
          Add
        </button>
      </form>
      <form method="post" action={`${base}/merge`}>
        {csrf}
        <label>
          <span>Merge into incident</span>
          <input type="text" name="into" required maxlength={128} placeholder="inc_…" />
        </label>
        <label>
          <span>Reason</span>
          <input type="text" name="reason" required maxlength={4096} />
        </label>
        <button type="submit" class="secondary">
          Merge
        </button>
      </form>
    </section>
  );
}

/** The bulk review of an incident's alerts: the selected ones or all of them, with a status, disposition, reason. */
function IncidentBulkReview(props: { readonly id: string; readonly total: number; readonly scope: PageScope }) {
  const { scope } = props;
  return (
    <form id="incident-bulk" method="post" action={`/incidents/${encodeURIComponent(props.id)}/review`} class="bulk">
      <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
      <label>
        <span>Review</span>
        <select name="scope">
          <option value="selected">the selected alerts</option>
          <option value="all">{`all ${props.total} alerts of this incident`}</option>
        </select>
      </label>
      <label>
        <input type="checkbox" data-select-all="ids" form="none" /> select all shown
      </label>
      <ReviewChoices />
      <label>
        <span>Reason</span>
        <input type="text" name="reason" required maxlength={4096} placeholder="kept in every alert's history" />
      </label>
      <button type="submit">Review alerts</button>
    </form>
  );
}

/** An incident's alerts as its page lists them. */
function AlertLines(props: {
  readonly lines: readonly IncidentAlertLine[];
  readonly scope: PageScope;
  /** The id of the bulk review form the lines' checkboxes belong to. */
  readonly pick?: string;
}) {
  const { scope, pick } = props;
  return (
    <Table<IncidentAlertLine>
      id="incident-alerts"
      rows={props.lines}
      rowKey={(a) => a.id}
      empty="No alert."
      columns={[
        ...(pick
          ? [
              {
                header: '',
                class: 'pick',
                cell: (a: IncidentAlertLine) => (
                  <input type="checkbox" name="ids" value={a.id} form={pick} aria-label={`select ${a.title}`} />
                ),
              },
            ]
          : []),
        { header: 'Severity', cell: (a) => <SeverityBadge severity={levelOf(a.severity)} /> },
        {
          header: 'Alert',
          cell: (a) =>
            scope.can('alerts:read') ? <a href={`/alerts/${encodeURIComponent(a.id)}`}>{a.title}</a> : a.title,
        },
        { header: 'Status', cell: (a) => <StatusLabel status={a.status} /> },
        { header: 'Assignee', cell: (a) => a.assignee ?? '—' },
        {
          header: 'Systems',
          cell: (a) => (
            <EntityKeys keys={a.affectedSystems} shown={a.affectedSystems.length} total={a.affectedSystemsCount} />
          ),
        },
        { header: 'Last seen', cell: (a) => shortTime(a.lastSeen) },
      ]}
    />
  );
}

/** Consecutive "alert joined" entries at least this many long collapse into one expandable entry. */
const JOINED_RUN = 2;

/** An incident's timeline entries with each run of consecutive "alert joined" entries as one run. */
export function collapseJoined(
  entries: readonly IncidentTimelineEntry[],
): Array<IncidentTimelineEntry | { readonly joined: IncidentTimelineEntry[] }> {
  const out: Array<IncidentTimelineEntry | { readonly joined: IncidentTimelineEntry[] }> = [];
  let run: IncidentTimelineEntry[] = [];
  const flush = () => {
    if (run.length >= JOINED_RUN) out.push({ joined: run });
    else out.push(...run);
    run = [];
  };
  for (const t of entries) {
    if (t.kind === 'alert_joined') run.push(t);
    else {
      flush();
      out.push(t);
    }
  }
  flush();
  return out;
}

const alertLink = (s: AlertsState, id: string) => (
  <a href={`/alerts/${encodeURIComponent(id)}`}>{s.alerts.get(id)?.title ?? id}</a>
);

/** An incident's timeline as its page shows it: a run of "alert joined" is one entry that expands to its alerts. */
function IncidentTimeline(props: { readonly entries: readonly IncidentTimelineEntry[]; readonly s: AlertsState }) {
  const { s } = props;
  return (
    <Timeline
      label="Incident timeline"
      empty="Nothing happened yet."
      entries={collapseJoined(props.entries).map((t) =>
        'joined' in t
          ? {
              at: t.joined[0]!.at,
              title: `${t.joined.length} alerts joined`,
              detail: (
                <details class="joined">
                  <summary>
                    {t.joined.length} alerts, {shortTime(t.joined[0]!.at)} to {shortTime(t.joined.at(-1)!.at)}
                  </summary>
                  <ul>
                    {t.joined.map((j) => (
                      <li>
                        <time datetime={j.at}>{shortTime(j.at)}</time> {j.alertId ? alertLink(s, j.alertId) : j.what}
                        {j.reason ? <span class="muted"> · {j.reason}</span> : null}
                      </li>
                    ))}
                  </ul>
                </details>
              ),
            }
          : {
              at: t.at,
              title: t.what,
              ...(t.principal ? { who: `${t.principal}${t.authentication ? ` (${t.authentication})` : ''}` } : {}),
              ...(t.reason || t.alertId
                ? {
                    detail: (
                      <>
                        {t.alertId ? alertLink(s, t.alertId) : null}
                        {t.alertId && t.reason ? ' · ' : ''}
                        {t.reason ?? ''}
                      </>
                    ),
                  }
                : {}),
            },
      )}
    />
  );
}

const EntityLinks = (props: { readonly entities: readonly string[] }) => (
  <>
    {props.entities.map((e) => (
      <>
        <EntityKey k={e} href={`/graph?entity=${encodeURIComponent(e)}`} />{' '}
      </>
    ))}
  </>
);

/** The incident of the path, or a 404. */
function incidentOf(s: AlertsState, id: string): IncidentView {
  const incident = s.incidents.get(id);
  if (!incident) throw new HttpError(404, `incident ${id.slice(0, 128)} does not exist`);
  return incident;
}

const detailRoute: PageRoute = {
  method: 'get',
  path: '/incidents/{id}',
  permission: 'incidents:read',
  audit: 'console_incident',
  async handle(c, scope) {
    const s = await alertsState(scope);
    const incident = incidentDetail(s, incidentOf(s, c.req.param('id')!).id)!;
    const base = `/incidents/${encodeURIComponent(incident.id)}`;
    const reviewer = scope.can('alerts:review') && incident.totals.alerts > 0;
    return scope.render(
      incident.title,
      <>
        <h1>
          <SeverityBadge severity={levelOf(incident.severity)} /> {incident.title}
        </h1>
        <section class="panel">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusLabel status={incident.status} />
              {incident.mergedInto ? (
                <>
                  {' '}
                  into <a href={`/incidents/${encodeURIComponent(incident.mergedInto)}`}>{incident.mergedInto}</a>
                </>
              ) : null}
            </dd>
            <dt>Assignee</dt>
            <dd>{incident.assignee ?? '—'}</dd>
            <dt>Origin</dt>
            <dd>{incident.origin}</dd>
            <dt>Alerts</dt>
            <dd>
              {incident.alertsOpen} open of {incident.totals.alerts}
            </dd>
            <dt>First seen</dt>
            <dd>{shortTime(incident.firstSeen)}</dd>
            <dt>Last activity</dt>
            <dd>{shortTime(incident.lastSeen)}</dd>
            <dt>Entities</dt>
            <dd>
              <EntityLinks entities={incident.entities} />
              <More total={incident.totals.entities} which="first" href={`${base}/entities`} />
            </dd>
            {incident.mergedFrom.length > 0 ? (
              <>
                <dt>Merged from</dt>
                <dd>
                  {incident.mergedFrom.map((m) => (
                    <>
                      <a href={`/incidents/${encodeURIComponent(m)}`}>{m}</a>{' '}
                    </>
                  ))}
                  {incident.totals.mergedFrom > incident.mergedFrom.length ? (
                    <span class="muted">
                      {' '}
                      (the newest {HISTORY_SHOWN} of {incident.totals.mergedFrom})
                    </span>
                  ) : null}
                </dd>
              </>
            ) : null}
          </dl>
        </section>
        <IncidentActions id={incident.id} status={incident.status} assignee={incident.assignee} scope={scope} />
        <h2>
          Alerts ({incident.totals.alerts})
          <More total={incident.totals.alerts} which="most recently seen" href={`${base}/alerts`} />
        </h2>
        {reviewer ? <IncidentBulkReview id={incident.id} total={incident.totals.alerts} scope={scope} /> : null}
        <AlertLines lines={incident.alerts} scope={scope} {...(reviewer ? { pick: 'incident-bulk' } : {})} />
        <h2>
          Timeline
          <More total={incident.totals.timeline} which="newest" href={`${base}/timeline`} />
        </h2>
        <section class="panel">
          <IncidentTimeline entries={incident.timeline} s={s} />
        </section>
      </>,
    );
  },
};

/**
 * `/incidents/{id}/{part}`: the whole of one of an incident's lists, HISTORY_SHOWN at a time: its
 * alerts (most recently seen first), entities (in the order they joined), timeline (oldest first).
 */
function incidentListRoute(
  part: 'alerts' | 'entities' | 'timeline',
  heading: string,
  show: (s: AlertsState, incident: IncidentView, cursor: string | undefined, scope: PageScope) => ShownPage | undefined,
): PageRoute {
  return {
    method: 'get',
    path: `/incidents/{id}/${part}`,
    permission: 'incidents:read',
    audit: `console_incident_${part}`,
    async handle(c, scope) {
      const s = await alertsState(scope);
      const incident = incidentOf(s, c.req.param('id')!);
      return listPage(
        scope,
        { title: incident.title, base: `/incidents/${encodeURIComponent(incident.id)}` },
        part,
        heading,
        show(s, incident, cursorOf(c), scope),
      );
    },
  };
}

const alertsListRoute = incidentListRoute('alerts', 'alerts, most recently seen first', (s, i, cursor, scope) => {
  const page = incidentAlertsPage(s, i.id, HISTORY_SHOWN, cursor);
  return page && { content: <AlertLines lines={page.items} scope={scope} />, nextCursor: page.nextCursor };
});
const entitiesListRoute = incidentListRoute('entities', 'entities, in the order they joined', (_s, i, cursor) => {
  const page = namesPage(i.entities, HISTORY_SHOWN, cursor);
  return page && { content: <EntityLinks entities={page.items} />, nextCursor: page.nextCursor };
});
const timelineListRoute = incidentListRoute('timeline', 'timeline, oldest first', (s, i, cursor) => {
  const page = timelinePage(i.timeline, HISTORY_SHOWN, cursor);
  return page && { content: <IncidentTimeline entries={page.items} s={s} />, nextCursor: page.nextCursor };
});

/**
 * An incident action: parse its form (a 400 names what is wrong), decide through the API's command, go back to the
 * incident.
 */
function incidentAction<T>(
  path: string,
  audit: string,
  parse: (fields: unknown) => T,
  decide: (
    id: string,
    form: T,
    scope: PageScope,
    ctx: ReturnType<typeof commandContext>,
  ) => Parameters<typeof executeAudited>[2],
  notice: (form: T) => string,
): PageRoute {
  return {
    method: 'post',
    path,
    permission: 'incidents:promote',
    audit,
    async handle(c, scope) {
      const id = c.req.param('id')!;
      const form = parse(await formFields(c));
      const ctx = commandContext(c, scope.deps);
      await executeAudited(c, scope.deps, decide(id, form, scope, ctx), 303);
      return backTo(c, `/incidents/${encodeURIComponent(id)}`, notice(form));
    },
  };
}

const splitIds = (text: string) => text.split(/[\s,]+/).filter((x) => x !== '');
const AssignIncidentForm = v.object({
  assignee: assigneeField,
  me: optionalField(v.pipe(v.string(), v.maxLength(128))),
});
const AddAlertsForm = v.object({ ids: v.pipe(v.string(), v.maxLength(65_536)), reason: v.string() });

const statusRoute = incidentAction(
  '/incidents/{id}/status',
  'console_incident_status',
  (f) =>
    parseForm(ChangeIncidentStatusBody, {
      status: (f as Record<string, unknown>)['status'],
      reason: (f as Record<string, unknown>)['reason'],
    }),
  (id, form, _s, ctx) => (m) => decideIncidentStatus(m.alerts, id, form, ctx),
  (form) => `Incident set to ${form.status}`,
);
const assignRoute = incidentAction(
  '/incidents/{id}/assign',
  'console_assign_incident',
  (f) => parseForm(AssignIncidentForm, f),
  (id, form, scope, ctx) => (m) =>
    decideAssignIncident(
      m.alerts,
      id,
      { assignee: form.me !== undefined ? scope.principal.id : form.assignee === '' ? null : form.assignee },
      ctx,
    ),
  (form) => (form.me !== undefined || form.assignee !== '' ? 'Incident assigned' : 'Incident unassigned'),
);
const addAlertsRoute = incidentAction(
  '/incidents/{id}/alerts',
  'console_add_incident_alerts',
  (f) => {
    const form = parseForm(AddAlertsForm, f);
    return parseForm(AddIncidentAlertsBody, { alertIds: splitIds(form.ids), reason: form.reason });
  },
  (id, form, _s, ctx) => (m) => decideAddIncidentAlerts(m.alerts, id, form, ctx),
  (form) => `${form.alertIds.length} alert(s) added`,
);
const mergeRoute = incidentAction(
  '/incidents/{id}/merge',
  'console_merge_incident',
  (f) =>
    parseForm(MergeIncidentBody, {
      into: (f as Record<string, unknown>)['into'],
      reason: (f as Record<string, unknown>)['reason'],
    }),
  (id, form, _s, ctx) => (m) => decideMergeIncident(m.alerts, id, form, ctx),
  (form) => `Merged into ${form.into}`,
);

/** The incident bulk review form: the selected alerts (each must be the incident's) or all of them. */
const IncidentReviewForm = v.object({
  scope: v.optional(v.picklist(['selected', 'all']), 'selected'),
  ids: idsField(BULK_REVIEW_MAX),
  status: v.picklist(ALERT_STATUSES),
  disposition: optionalField(v.picklist(ALERT_DISPOSITIONS)),
  reason: v.pipe(v.string(), v.trim(), v.minLength(1, 'a review needs a reason'), v.maxLength(4096)),
});

/**
 * Reviews an incident's alerts at once through the bulk review command (`AlertsBulkReviewed`): the selected ones, or
 * all of them (by the filter `incident`, so the record says what "all" meant).
 */
const reviewAlertsRoute: PageRoute = {
  method: 'post',
  path: '/incidents/{id}/review',
  permission: 'alerts:review',
  audit: 'console_incident_bulk_review',
  async handle(c, scope) {
    const id = c.req.param('id')!;
    const form = parseForm(IncidentReviewForm, await formFields(c));
    const incident = incidentOf(await alertsState(scope), id);
    const ids = form.ids ?? [];
    if (form.scope === 'selected') {
      if (ids.length === 0) throw new HttpError(400, 'select at least one alert, or review all of the incident');
      const members = new Set(incident.alertIds);
      const strangers = ids.filter((a) => !members.has(a));
      if (strangers.length > 0)
        throw new HttpError(400, 'invalid form', [
          `ids: not alerts of this incident: ${strangers.slice(0, 5).join(', ')}`,
        ]);
    }
    const cmd = {
      ...(form.scope === 'all' ? { filter: { incident: incident.id } } : { alertIds: [...new Set(ids)] }),
      status: form.status,
      ...(form.disposition ? { disposition: form.disposition } : {}),
      reason: form.reason,
    };
    const ctx = commandContext(c, scope.deps);
    const { result } = await executeAudited(c, scope.deps, (m) => decideBulkReview(m.alerts, cmd, ctx), 303);
    return backTo(
      c,
      `/incidents/${encodeURIComponent(id)}`,
      `${result.reviewed} alert${result.reviewed === 1 ? '' : 's'} set to ${result.status.replace('_', ' ')}`,
    );
  },
};

/** The incident list and detail pages, the whole of an incident's lists, and the incident's lifecycle actions. */
export const incidentPages: readonly PageRoute[] = [
  listRoute,
  detailRoute,
  alertsListRoute,
  entitiesListRoute,
  timelineListRoute,
  statusRoute,
  assignRoute,
  addAlertsRoute,
  mergeRoute,
  reviewAlertsRoute,
];
