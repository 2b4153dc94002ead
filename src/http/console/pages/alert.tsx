import * as v from 'valibot';
import { AddAlertNoteBody, decideAddAlertNote } from '../../../commands/add-alert-note.js';
import { AddIncidentAlertsBody, decideAddIncidentAlerts } from '../../../commands/add-incident-alerts.js';
import { decideAssignAlert } from '../../../commands/assign-alert.js';
import {
  PromoteIncidentBody,
  Reason,
  decidePromoteIncident,
  decideReviewAlert,
} from '../../../commands/review-alert.js';
import { HttpError } from '../../errors.js';
import { commandContext, executeAudited } from '../../request-context.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES, type AlertsState, type AlertView } from '../../../projections/alerts.js';
import type { IntelReason } from '../../../events/detection-records.js';
import {
  HISTORY_SHOWN,
  alertDetail,
  alertTimeline,
  namesPage,
  timelinePage,
  type AlertTimelineEntry,
} from '../../../projections/alerts-query.js';
import { lookupEvent } from '../../../projections/evidence.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { SuppressionFacts } from '../../web/components/suppression.js';
import { ReviewChoices } from '../../web/components/review-choices.js';
import { Timeline } from '../../web/components/timeline.js';
import { EntityKey } from '../../web/components/entity-key.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { assigneeField, backTo, formFields, idsField, optionalField, parseForm } from '../forms.js';
import { entitiesQuery, huntHref } from '../hunt-query.js';
import type { PageRoute, PageScope } from '../page-route.js';
import { alertsState } from './alerts.js';
import { cursorOf, listPage, More, type ShownPage } from './paged-list.js';

/** Evidence events shown on the detail page (the alert keeps up to 200 references; the count goes on). */
const EVIDENCE_SHOWN = 50;

/** Why a threat intelligence alert was raised: the indicator, its feed and version, validity, context, fields. */
function IntelReasonFacts(props: { readonly reason: IntelReason }) {
  const i = props.reason.intel;
  return (
    <dl class="facts">
      <dt>Indicator</dt>
      <dd>
        {i.name ? `${i.name} ` : ''}
        <code>{i.pattern}</code> <span class="muted">({i.indicator})</span>
      </dd>
      <dt>Feed</dt>
      <dd>
        {i.feed}, version <code>{i.version.slice(0, 24)}</code>
      </dd>
      <dt>Confidence</dt>
      <dd>{i.confidence ?? '—'}</dd>
      <dt>Valid</dt>
      <dd>
        {i.validFrom ? `from ${shortTime(i.validFrom)}` : 'from ever'}{' '}
        {i.validUntil ? `until ${shortTime(i.validUntil)}` : 'with no end'}
      </dd>
      <dt>Relates to</dt>
      <dd>{i.related.map((x) => `${x.type} ${x.name}`).join(', ') || '—'}</dd>
      <dt>Matched</dt>
      <dd>
        {i.fields.map((f) => (
          <>
            <code>{f.field}</code> = <code>{f.value}</code> ({f.type}){' '}
          </>
        ))}
      </dd>
    </dl>
  );
}

/** The match reason: which selection matched which field and value, or why a correlation fired. */
function MatchReason(props: { readonly alert: AlertView }) {
  const r = props.alert.matchReason;
  if ('intel' in r) return <IntelReasonFacts reason={r} />;
  if ('correlation' in r) {
    return (
      <dl class="facts">
        <dt>Correlation</dt>
        <dd>
          {r.correlation} of rules {r.rules.join(', ')} within {r.timespan}
        </dd>
        <dt>Grouped by</dt>
        <dd>
          {Object.entries(r.groupBy)
            .map(([k, x]) => `${k}=${String(x)}`)
            .join(', ') || '—'}
        </dd>
        <dt>Value</dt>
        <dd>
          {r.value}
          {r.field ? ` (${r.field})` : ''}, condition{' '}
          {Object.entries(r.condition)
            .map(([k, x]) => `${k} ${x}`)
            .join(', ')}
        </dd>
      </dl>
    );
  }
  return (
    <>
      <p>
        Selections that held:{' '}
        {r.selections.map((s) => (
          <code>{s}</code>
        ))}
        {r.keywords.length > 0 ? (
          <>
            {' '}
            · keywords:{' '}
            {r.keywords.map((k) => (
              <code>{k}</code>
            ))}
          </>
        ) : null}
      </p>
      {r.fields.length > 0 ? (
        <table class="data">
          <thead>
            <tr>
              <th>Selection</th>
              <th>Field</th>
              <th>Modifiers</th>
              <th>Value seen</th>
            </tr>
          </thead>
          <tbody>
            {r.fields.map((f) => (
              <tr>
                <td>
                  <code>{f.selection}</code>
                </td>
                <td>
                  <code>{f.field}</code>
                </td>
                <td>{f.modifiers.join('|') || '—'}</td>
                <td>
                  <code>{JSON.stringify(f.value)}</code>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </>
  );
}

/** A timeline entry of the alert's history: what changed, who, how authenticated, why. */
function historyEntry(e: AlertTimelineEntry) {
  const who = `${e.principal} (${e.authentication})`;
  if (e.kind === 'review') {
    return {
      at: e.at,
      who,
      title: (
        <>
          Review: <StatusLabel status={e.from} /> → <StatusLabel status={e.to} />
          {e.disposition ? ` · ${e.disposition.replace('_', ' ')}` : ''}
          {e.bulk ? ' · bulk' : ''}
        </>
      ),
      detail: e.reason,
    };
  }
  if (e.kind === 'assignment')
    return {
      at: e.at,
      who,
      title: (
        <>
          Assigned: {e.from ?? 'nobody'} → {e.to ?? 'nobody'}
        </>
      ),
      detail: e.reason ?? '',
    };
  return { at: e.at, who, title: <>Note</>, detail: e.text };
}

const SystemLinks = (props: { readonly systems: readonly string[] }) => (
  <ul>
    {props.systems.map((s) => (
      <li>
        <EntityKey k={s} href={`/graph?entity=${encodeURIComponent(s)}`} />
      </li>
    ))}
  </ul>
);

/** The actions a reviewer is offered: review, assign, note, promote (with other alerts) into an incident. */
function Actions(props: { readonly alert: AlertView; readonly scope: PageScope }) {
  const { alert, scope } = props;
  const id = encodeURIComponent(alert.id);
  const csrf = <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />;
  return (
    <section class="actions" aria-label="Actions">
      {scope.can('alerts:review') ? (
        <>
          <form method="post" action={`/alerts/${id}/review`}>
            {csrf}
            <ReviewChoices status={alert.status} {...(alert.disposition ? { disposition: alert.disposition } : {})} />
            <label>
              <span>Reason</span>
              <input type="text" name="reason" required maxlength={4096} />
            </label>
            <button type="submit">Review</button>
          </form>
          <form method="post" action={`/alerts/${id}/assign`}>
            {csrf}
            <label>
              <span>Assignee</span>
              <input
                type="text"
                name="assignee"
                value={alert.assignee ?? ''}
                maxlength={128}
                placeholder="empty: nobody"
              />
            </label>
            <button type="submit" class="secondary">
              Assign
            </button>
            <button type="submit" class="secondary" name="me" value={scope.principal.id}>
              Assign to me
            </button>
          </form>
          <form method="post" action={`/alerts/${id}/notes`}>
            {csrf}
            <label>
              <span>Note</span>
              <input type="text" name="text" required maxlength={8192} />
            </label>
            <button type="submit" class="secondary">
              Add note
            </button>
          </form>
        </>
      ) : null}
      {scope.can('incidents:promote') ? (
        <form method="post" action="/incidents/promote">
          {csrf}
          <input type="hidden" name="ids" value={alert.id} />
          <label>
            <span>Other alert ids (comma-separated)</span>
            <input type="text" name="more" maxlength={4096} />
          </label>
          <label>
            <span>New incident's title</span>
            <input type="text" name="title" maxlength={256} value={alert.title} />
          </label>
          <label>
            <span>or existing incident</span>
            <input type="text" name="incident" maxlength={128} placeholder="inc_…" />
          </label>
          <label>
            <span>Reason</span>
            <input type="text" name="reason" required maxlength={4096} />
          </label>
          <button type="submit" class="secondary">
            Promote to incident
          </button>
        </form>
      ) : null}
    </section>
  );
}

/** The hunt of the events naming the alert's systems, from an hour before it was first seen to an hour after last. */
function alertHuntHref(firstSeen: string, lastSeen: string, systems: readonly string[]): string {
  const hour = 3_600_000;
  return huntHref(entitiesQuery(systems), {
    sinceMs: Date.parse(firstSeen) - hour,
    untilMs: Date.parse(lastSeen) + hour,
  });
}

/** The alert detail page. Evidence (raw events) is shown only to a principal who may read events. */
function AlertPage(props: { readonly alert: AlertView; readonly scope: PageScope; readonly rule: RuleOfAlert }) {
  const { alert, scope } = props;
  const evidence = scope.can('events:read');
  const { timeline, historyTotals, affectedSystems, affectedSystemsCount, affectedSystemsComplete } =
    alertDetail(alert);
  return (
    <>
      <h1>
        <SeverityBadge severity={alert.level} /> {alert.title}
      </h1>
      <div class="grid">
        <section class="panel">
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <StatusLabel status={alert.status} />
              {alert.disposition ? ` · ${alert.disposition.replace('_', ' ')}` : ''}
            </dd>
            <dt>Severity</dt>
            <dd>
              {alert.severity} ({alert.level})
            </dd>
            <dt>Confidence</dt>
            <dd>{Math.round(alert.confidence * 100)} %</dd>
            <dt>Assignee</dt>
            <dd>{alert.assignee ?? '—'}</dd>
            <dt>Rule</dt>
            <dd>
              {props.rule.installed ? (
                <a href={`/rules/${encodeURIComponent(alert.ruleId)}`}>{props.rule.title}</a>
              ) : (
                props.rule.title
              )}
              {alert.author ? ` by ${alert.author}` : ''} <code class="muted">{alert.ruleId}</code>
              <br />
              <a href={withQuery('/alerts', { rule: alert.ruleId })} id="rule-alerts">
                {props.rule.alerts === 1
                  ? 'No other alert of this rule'
                  : `${(props.rule.alerts - 1).toLocaleString('en')} other ` +
                    `alert${props.rule.alerts === 2 ? '' : 's'} of this rule`}
              </a>
            </dd>
            <dt>First seen</dt>
            <dd>{shortTime(alert.firstSeen)}</dd>
            <dt>Last seen</dt>
            <dd>
              {shortTime(alert.lastSeen)}
              {evidence && affectedSystems.length > 0 ? (
                <>
                  {' '}
                  <a id="alert-hunt" href={alertHuntHref(alert.firstSeen, alert.lastSeen, affectedSystems)}>
                    Hunt around it
                  </a>
                </>
              ) : null}
            </dd>
            <dt>Events</dt>
            <dd>{alert.evidenceCount}</dd>
            <SuppressionFacts alert={alert} />
            <dt>Incident</dt>
            <dd>
              {alert.incidentId ? (
                <a href={`/incidents/${encodeURIComponent(alert.incidentId)}`}>{alert.incidentId}</a>
              ) : (
                '—'
              )}
            </dd>
            <dt>ATT&amp;CK</dt>
            <dd>{alert.attack.join(', ') || '—'}</dd>
          </dl>
        </section>
        <section class="panel">
          <h2>
            Affected systems
            <More total={affectedSystemsCount} which="first" href={`/alerts/${encodeURIComponent(alert.id)}/systems`} />
          </h2>
          <SystemLinks systems={affectedSystems} />
          {affectedSystemsComplete ? null : (
            <p class="muted">
              More systems were seen than Vigil keeps on one alert ({affectedSystemsCount.toLocaleString('en')} kept);
              the evidence names them all.
            </p>
          )}
        </section>
      </div>
      <Actions alert={alert} scope={scope} />
      {/* Exceptions cover installed Sigma rules: Vigil's own checks and threat intelligence have none to offer. */}
      {scope.can('exceptions:write') &&
      alert.evidence.length > 0 &&
      scope.deps.reads.detection.rules.has(alert.ruleId) ? (
        <p>
          <a class="button secondary" href={`/exceptions/new?fromAlert=${encodeURIComponent(alert.id)}`}>
            Create an exception from this alert
          </a>
        </p>
      ) : null}
      <h2>Why it matched</h2>
      <section class="panel">
        <MatchReason alert={alert} />
      </section>
      {evidence ? (
        <>
          <h2>
            Evidence{' '}
            <span class="muted">
              ({alert.evidenceCount} event{alert.evidenceCount === 1 ? '' : 's'}
              {alert.evidence.length > EVIDENCE_SHOWN ? `, the first ${EVIDENCE_SHOWN} shown` : ''})
            </span>
          </h2>
          <section class="panel" id="evidence">
            {alert.evidence.slice(0, EVIDENCE_SHOWN).map((ref) => {
              const event = lookupEvent(scope.deps.reads, ref.eventId);
              return (
                <details>
                  <summary>
                    <time datetime={ref.time}>{shortTime(ref.time)}</time> {ref.summary}
                  </summary>
                  {event ? (
                    <pre>{JSON.stringify(event, null, 2)}</pre>
                  ) : (
                    <p class="muted">event {ref.eventId} is not in the store</p>
                  )}
                </details>
              );
            })}
          </section>
        </>
      ) : null}
      <h2>
        History
        <More total={historyTotals.timeline} which="newest" href={`/alerts/${encodeURIComponent(alert.id)}/timeline`} />
      </h2>
      <section class="panel">
        <Timeline
          label="Review history"
          empty="Not reviewed, assigned or annotated yet."
          entries={timeline.map(historyEntry)}
        />
      </section>
    </>
  );
}

/** An alert's rule as its page names it: the installed rule's title (else the alert's), and how many alerts it has. */
interface RuleOfAlert {
  readonly title: string;
  readonly installed: boolean;
  readonly alerts: number;
}

function ruleOf(scope: PageScope, s: AlertsState, alert: AlertView): RuleOfAlert {
  const rule = scope.deps.reads.detection.rules.get(alert.ruleId);
  let alerts = 0;
  for (const a of s.alerts.values()) if (a.ruleId === alert.ruleId) alerts++;
  return { title: rule?.compiled.title ?? alert.title, installed: rule !== undefined, alerts };
}

/** The alert of the path, or a 404. */
async function alertOf(scope: PageScope, id: string): Promise<AlertView> {
  const alert = (await alertsState(scope)).alerts.get(id);
  if (!alert) throw new HttpError(404, `alert ${id.slice(0, 128)} does not exist`);
  return alert;
}

const detailRoute: PageRoute = {
  method: 'get',
  path: '/alerts/{alertId}',
  permission: 'alerts:read',
  audit: 'console_alert',
  async handle(c, scope) {
    const alert = await alertOf(scope, c.req.param('alertId')!);
    const rule = ruleOf(scope, await alertsState(scope), alert);
    return scope.render(alert.title, <AlertPage alert={alert} scope={scope} rule={rule} />);
  },
};

/**
 * `/alerts/{alertId}/{part}`: the whole of one of an alert's lists, HISTORY_SHOWN at a time: its history (oldest
 * first), its affected systems.
 */
function alertListRoute(
  part: 'timeline' | 'systems',
  heading: string,
  show: (alert: AlertView, cursor: string | undefined) => ShownPage | undefined,
): PageRoute {
  return {
    method: 'get',
    path: `/alerts/{alertId}/${part}`,
    permission: 'alerts:read',
    audit: `console_alert_${part}`,
    async handle(c, scope) {
      const alert = await alertOf(scope, c.req.param('alertId')!);
      return listPage(
        scope,
        { title: alert.title, base: `/alerts/${encodeURIComponent(alert.id)}` },
        part,
        heading,
        show(alert, cursorOf(c)),
      );
    },
  };
}

const timelineListRoute = alertListRoute('timeline', 'history, oldest first', (alert, cursor) => {
  const page = timelinePage(alertTimeline(alert), HISTORY_SHOWN, cursor);
  return (
    page && {
      content: (
        <Timeline
          label="Review history"
          empty="Not reviewed, assigned or annotated yet."
          entries={page.items.map(historyEntry)}
        />
      ),
      nextCursor: page.nextCursor,
    }
  );
});
const systemsListRoute = alertListRoute('systems', 'affected systems, in the order they came', (alert, cursor) => {
  const page = namesPage(alert.affectedSystems, HISTORY_SHOWN, cursor);
  return page && { content: <SystemLinks systems={page.items} />, nextCursor: page.nextCursor };
});

const ReviewForm = v.object({
  status: v.picklist(ALERT_STATUSES),
  disposition: optionalField(v.picklist(ALERT_DISPOSITIONS)),
  reason: Reason,
});

const reviewRoute: PageRoute = {
  method: 'post',
  path: '/alerts/{alertId}/review',
  permission: 'alerts:review',
  audit: 'console_review_alert',
  async handle(c, scope) {
    const id = c.req.param('alertId')!;
    const form = parseForm(ReviewForm, await formFields(c));
    const ctx = commandContext(c, scope.deps);
    const body = {
      status: form.status,
      reason: form.reason,
      ...(form.disposition ? { disposition: form.disposition } : {}),
    };
    await executeAudited(c, scope.deps, (m) => decideReviewAlert(m.alerts, id, body, ctx), 303);
    return backTo(c, `/alerts/${encodeURIComponent(id)}`, `Alert set to ${form.status.replace('_', ' ')}`);
  },
};

/** The assign form: an assignee typed (empty clears it), or the signed-in principal by the "Assign to me" button. */
const AssignForm = v.object({ assignee: assigneeField, me: optionalField(v.pipe(v.string(), v.maxLength(128))) });

const assignRoute: PageRoute = {
  method: 'post',
  path: '/alerts/{alertId}/assign',
  permission: 'alerts:review',
  audit: 'console_assign_alert',
  async handle(c, scope) {
    const id = c.req.param('alertId')!;
    const form = parseForm(AssignForm, await formFields(c));
    const ctx = commandContext(c, scope.deps);
    const assignee = form.me !== undefined ? scope.principal.id : form.assignee === '' ? null : form.assignee;
    await executeAudited(c, scope.deps, (m) => decideAssignAlert(m.alerts, id, { assignee }, ctx), 303);
    return backTo(c, `/alerts/${encodeURIComponent(id)}`, assignee ? `Assigned to ${assignee}` : 'Unassigned');
  },
};

const noteRoute: PageRoute = {
  method: 'post',
  path: '/alerts/{alertId}/notes',
  permission: 'alerts:review',
  audit: 'console_add_alert_note',
  async handle(c, scope) {
    const id = c.req.param('alertId')!;
    const form = parseForm(AddAlertNoteBody, await formFields(c));
    const ctx = commandContext(c, scope.deps);
    await executeAudited(c, scope.deps, (m) => decideAddAlertNote(m.alerts, id, form, ctx), 303);
    return backTo(c, `/alerts/${encodeURIComponent(id)}`, 'Note added');
  },
};

/**
 * The promote form: alert ids (checked boxes and a comma-separated list), a new incident's title or an existing
 * incident, a reason.
 */
const PromoteForm = v.object({
  ids: idsField(500),
  more: optionalField(v.pipe(v.string(), v.maxLength(65_536))),
  title: optionalField(v.pipe(v.string(), v.maxLength(256))),
  incident: optionalField(v.pipe(v.string(), v.trim(), v.maxLength(128))),
  reason: v.optional(v.string(), ''),
});

const promoteRoute: PageRoute = {
  method: 'post',
  path: '/incidents/promote',
  permission: 'incidents:promote',
  audit: 'console_promote_incident',
  async handle(c, scope) {
    const form = parseForm(PromoteForm, await formFields(c));
    const ids = [...(form.ids ?? []), ...(form.more ?? '').split(/[\s,]+/).filter((x) => x !== '')];
    const ctx = commandContext(c, scope.deps);
    if (form.incident) {
      const body = parseForm(AddIncidentAlertsBody, { alertIds: ids, reason: form.reason });
      const incident = form.incident;
      const { result } = await executeAudited(
        c,
        scope.deps,
        (m) => decideAddIncidentAlerts(m.alerts, incident, body, ctx),
        303,
      );
      return backTo(
        c,
        `/incidents/${encodeURIComponent(result.id)}`,
        `${result.added.length} alert${result.added.length === 1 ? '' : 's'} added`,
      );
    }
    const body = parseForm(PromoteIncidentBody, { alertIds: ids, title: form.title ?? '', reason: form.reason });
    const { result } = await executeAudited(c, scope.deps, (m) => decidePromoteIncident(m.alerts, body, ctx), 303);
    return backTo(
      c,
      `/incidents/${encodeURIComponent(result.id)}`,
      `Incident opened with ${result.alertIds.length} alert${result.alertIds.length === 1 ? '' : 's'}`,
    );
  },
};

/** The alert detail page and its actions. */
export const alertDetailPages: readonly PageRoute[] = [
  detailRoute,
  timelineListRoute,
  systemsListRoute,
  reviewRoute,
  assignRoute,
  noteRoute,
  promoteRoute,
];
