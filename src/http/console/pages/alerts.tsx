import * as v from 'valibot';
import { decideAssignAlert } from '../../../commands/assign-alert.js';
import { BULK_REVIEW_MAX, decideBulkReview } from '../../../commands/bulk-review-alerts.js';
import { accept, type Decision, type DomainEvent } from '../../../commands/decision.js';
import { LEVELS } from '../../../detection/types.js';
import { HttpError } from '../../errors.js';
import { commandContext, executeAudited } from '../../request-context.js';
import { matchingAlerts, resolveRule, type AlertFilter } from '../../../projections/alerts-query.js';
import type { DetectionState } from '../../../projections/detection.js';
import { ruleNames } from '../../routes/alert-lists.js';
import { EntityKeys } from '../../web/components/entity-key.js';
import { ReviewChoices } from '../../web/components/review-choices.js';
import { ALERT_DISPOSITIONS, ALERT_STATUSES, type AlertsState, type AlertView } from '../../../projections/alerts.js';
import { CSRF_FIELD } from '../../web/csrf.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { FilterBar } from '../../web/components/filter-bar.js';
import { Pager, Table, type Column } from '../../web/components/table.js';
import { shortTime, withQuery } from '../../web/components/url.js';
import { assigneeField, backTo, formFields, idsField, optionalField, parseForm } from '../forms.js';
import type { PageRoute, PageScope } from '../page-route.js';
import {
  groupedQueue,
  ruleAndSource,
  sourceOfRule,
  type AlertGroup,
  type GroupedQueue,
  type QueueFacets,
} from '../queries/alert-groups.js';
import {
  QueueQuery,
  queueFilter,
  queuePage,
  type QueuePage as QueuePageResult,
  type QueueParams,
} from '../queries/alert-queue.js';

/** Alerts on one page of the queue. */
export const QUEUE_PAGE_SIZE = 50;

const FILTER_NAMES = ['status', 'severity', 'rule', 'source', 'entity', 'assignee', 'unassigned', 'since'] as const;

/** Rule groups on one page of the grouped queue. */
export const GROUPS_PAGE_SIZE = 50;

/** The queue's filters as URL parameters (what "all that match" means, carried by the bulk form). */
function filterParams(q: QueueParams): Record<string, string | undefined> {
  return Object.fromEntries(FILTER_NAMES.map((n) => [n, q[n]]));
}

/** What the queue route computed: the alerts or groups of the page, the facets, a rule the filter did not find. */
interface QueueView {
  readonly q: QueueParams;
  readonly grouped: GroupedQueue;
  readonly flat?: QueuePageResult;
  readonly unknownRule?: string;
}

/** The queue's columns for one alert (the flat list and a group's rows). */
function alertColumns(reviewer: boolean, sortable: boolean): Column<AlertView>[] {
  const s = (key: string) => (sortable ? { sort: key } : {});
  return [
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
    { header: 'Severity', ...s('severity'), cell: (a) => <SeverityBadge severity={a.level} /> },
    { header: 'Alert', ...s('title'), cell: (a) => <a href={`/alerts/${encodeURIComponent(a.id)}`}>{a.title}</a> },
    {
      header: 'Status',
      ...s('status'),
      cell: (a) => (
        <>
          <StatusLabel status={a.status} />
          {a.disposition ? <span class="muted"> · {a.disposition.replace('_', ' ')}</span> : null}
        </>
      ),
    },
    { header: 'Assignee', ...s('assignee'), cell: (a) => a.assignee ?? <span class="muted">—</span> },
    { header: 'Systems', cell: (a) => <EntityKeys keys={a.affectedSystems} shown={3} /> },
    { header: 'Events', class: 'num', cell: (a) => String(a.evidenceCount) },
    { header: 'Last seen', ...s('lastSeen'), cell: (a) => <time datetime={a.lastSeen}>{shortTime(a.lastSeen)}</time> },
  ];
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en')} ${n === 1 ? one : many}`;

/** One rule's alerts: a summary line (how many, systems, newest, worst), expandable to its newest alerts. */
function GroupRow(props: { g: AlertGroup; q: QueueParams; reviewer: boolean }) {
  const { g, q, reviewer } = props;
  const all = withQuery('/alerts', { ...filterParams(q), rule: g.ruleId, view: 'flat' });
  return (
    <details class="group" data-rule={g.ruleId}>
      <summary>
        <SeverityBadge severity={g.level} /> <b>{g.title}</b> <span class="count">{plural(g.alerts, 'alert')}</span>
        <span class="muted">
          {' '}
          · {plural(g.systems, 'system')} · {plural(g.groupKeys, 'group key')} · {g.notDismissed} not dismissed
          {' · newest '}
          <time datetime={g.lastSeen}>{shortTime(g.lastSeen)}</time>
        </span>
      </summary>
      <Table
        columns={alertColumns(reviewer, false)}
        rows={g.newest}
        rowKey={(a) => a.id}
        rowHref={(a) => `/alerts/${encodeURIComponent(a.id)}`}
        empty="No alert."
      />
      <p>
        {g.alerts > g.newest.length ? `The newest ${g.newest.length} shown. ` : ''}
        <a href={all}>
          {g.alerts > g.newest.length ? `All ${plural(g.alerts, 'alert')} of this rule` : 'As a flat list'}
        </a>{' '}
        · <a href={`/rules/${encodeURIComponent(g.ruleId)}`}>the rule</a>
      </p>
    </details>
  );
}

/** One facet: its values with counts over the current filter, each a link that filters by it (again: clears it). */
function FacetList(props: {
  label: string;
  name: (typeof FILTER_NAMES)[number];
  q: QueueParams;
  values: ReadonlyArray<readonly [value: string, count: number, label?: string]>;
  distinct?: number;
  param?: (value: string) => Record<string, string | undefined>;
}) {
  const { q, name } = props;
  const param = props.param ?? ((x: string) => ({ [name]: x }));
  return (
    <section class="facet" aria-label={`${props.label} facet`} data-facet={name}>
      <h3>{props.label}</h3>
      <ul>
        {props.values.map(([value, count, label]) => {
          const set = param(value);
          const on = Object.entries(set).every(([k, x]) => q[k as keyof QueueParams] === x);
          const next = on ? Object.fromEntries(Object.keys(set).map((k) => [k, undefined])) : set;
          return (
            <li>
              <a
                href={withQuery('/alerts', { ...filterParams(q), view: q.view, ...next })}
                aria-current={on ? 'true' : undefined}
                data-value={value}
              >
                {label ?? value}
              </a>{' '}
              <span class="count">{count.toLocaleString('en')}</span>
            </li>
          );
        })}
      </ul>
      {props.distinct !== undefined && props.distinct > props.values.length ? (
        <p class="muted">and {props.distinct - props.values.length} more</p>
      ) : null}
    </section>
  );
}

/** The facets of the queue: counts over the alerts the current filter matches. */
function Facets(props: { q: QueueParams; f: QueueFacets }) {
  const { q, f } = props;
  return (
    <aside class="facets panel" aria-label="Facets">
      <FacetList
        label="Rule"
        name="rule"
        q={q}
        values={f.rule.map(([id, n, t]) => [id, n, t])}
        distinct={f.distinct.rule}
      />
      <FacetList label="Severity (filter: at least)" name="severity" q={q} values={f.severity} />
      <FacetList label="Status" name="status" q={q} values={f.status.map(([x, n]) => [x, n, x.replace('_', ' ')])} />
      <FacetList
        label="Assignee"
        name="assignee"
        q={q}
        values={f.assignee.map(([x, n]) => [x, n, x === '' ? 'nobody' : x])}
        distinct={f.distinct.assignee}
        param={(x) => (x === '' ? { unassigned: 'true' } : { assignee: x })}
      />
      <FacetList
        label="Source (the rule's log source)"
        name="source"
        q={q}
        values={f.source}
        distinct={f.distinct.source}
      />
    </aside>
  );
}

/** The queue page: filters, facets, groups by rule (or the flat sortable table), paging, and the bulk actions. */
function QueuePage(props: { view: QueueView; scope: PageScope; url: string }) {
  const { q, grouped, flat, unknownRule } = props.view;
  const { scope } = props;
  const reviewer = scope.can('alerts:review');
  const total = grouped.total;
  const query = { ...filterParams(q), sort: q.sort, cursor: q.cursor, view: q.view };
  return (
    <>
      <h1>
        Alerts <span class="muted">({total.toLocaleString('en')} matching)</span>
      </h1>
      <nav class="view-toggle" aria-label="View">
        {flat ? (
          <>
            <a href={withQuery('/alerts', { ...filterParams(q), view: 'grouped' })}>Grouped by rule</a> ·{' '}
            <b>Flat list</b>
          </>
        ) : (
          <>
            <b>Grouped by rule</b> ·{' '}
            <a href={withQuery('/alerts', { ...filterParams(q), view: 'flat', sort: q.sort })}>Flat list</a>
          </>
        )}
      </nav>
      <FilterBar
        action="/alerts"
        values={filterParams(q)}
        keep={{ sort: q.sort, view: q.view }}
        fields={[
          {
            kind: 'select',
            name: 'status',
            label: 'Status',
            options: ALERT_STATUSES.map((s) => [s, s.replace('_', ' ')] as const),
          },
          { kind: 'select', name: 'severity', label: 'Severity at least', options: LEVELS.map((l) => [l, l] as const) },
          { kind: 'text', name: 'rule', label: 'Rule', placeholder: 'id, title or name' },
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
      {unknownRule !== undefined ? (
        <div class="notice notice-error" role="alert">
          <p>No rule has the id, title or name “{unknownRule}”.</p>
        </div>
      ) : null}
      <p class="muted">
        <a href={withQuery('/alerts', { status: 'open', assignee: scope.principal.id })}>Assigned to me</a> ·{' '}
        <a href={withQuery('/alerts', { status: 'open', unassigned: 'true' })}>Open, nobody on it</a> ·{' '}
        <a href={withQuery('/alerts', { status: 'open' })}>Open</a> ·{' '}
        <span>
          Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>x</kbd> select, <kbd>Enter</kbd> open, <kbd>/</kbd> filter.
        </span>
      </p>
      {reviewer ? <BulkActions q={q} total={total} scope={scope} url={props.url} /> : null}
      <div class="queue">
        <Facets q={q} f={grouped.facets} />
        <div class="queue-main">
          {flat ? (
            <>
              <Table
                id="queue"
                keyboard
                columns={alertColumns(reviewer, true)}
                rows={flat.alerts}
                rowKey={(a) => a.id}
                rowHref={(a) => `/alerts/${encodeURIComponent(a.id)}`}
                empty="No alert matches these filters."
                sort={{ path: '/alerts', query, current: q.sort ?? '-lastSeen' }}
              />
              <Pager
                path="/alerts"
                query={query}
                nextCursor={flat.nextCursor}
                shown={flat.alerts.length}
                total={total}
              />
            </>
          ) : (
            <>
              <section id="groups" aria-label="Alerts grouped by rule">
                {grouped.groups.length === 0 ? (
                  <p class="empty">No alert matches these filters.</p>
                ) : (
                  grouped.groups.map((g) => <GroupRow g={g} q={q} reviewer={reviewer} />)
                )}
              </section>
              <nav class="pager" aria-label="Pages">
                <span>
                  {plural(grouped.groups.length, 'rule')} shown of {grouped.groupsTotal.toLocaleString('en')}
                </span>
                {q.cursor ? <a href={withQuery('/alerts', { ...filterParams(q), view: q.view })}>First page</a> : null}
                {grouped.nextCursor ? (
                  <a
                    rel="next"
                    href={withQuery('/alerts', { ...filterParams(q), view: q.view, cursor: grouped.nextCursor })}
                  >
                    Next page
                  </a>
                ) : null}
              </nav>
            </>
          )}
        </div>
      </div>
    </>
  );
}

/** The bulk actions over the selection, or over every alert the filter matches. */
function BulkActions(props: { q: QueueParams; total: number; scope: PageScope; url: string }) {
  const { q, scope } = props;
  return (
    <form id="bulk" method="post" action="/alerts/review" class="bulk">
      <input type="hidden" name={CSRF_FIELD} value={scope.csrf} />
      <input type="hidden" name="back" value={props.url} />
      {FILTER_NAMES.map((n) => (q[n] ? <input type="hidden" name={`filter.${n}`} value={q[n]} /> : null))}
      <label>
        <span>Apply to</span>
        <select name="scope">
          <option value="selected">the selected alerts</option>
          <option value="matching">{`all ${props.total} that match the filter`}</option>
        </select>
      </label>
      <label>
        <input type="checkbox" data-select-all="ids" form="none" /> select this page
      </label>
      <ReviewChoices />
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
  );
}

/** The alerts view, as of every write acknowledged before the request (the API's promise). */
export async function alertsState(scope: PageScope): Promise<AlertsState> {
  await scope.deps.readYourWrites();
  return scope.deps.reads.alerts;
}

/**
 * The projection's filter of a queue query, with its rule resolved (an id, or every rule of a title or name) and its
 * source turned into the rules that read it; `unknownRule` when the rule named none (the filter then matches none).
 */
function resolvedFilter(
  s: AlertsState,
  rules: DetectionState['rules'],
  q: QueueParams,
): { filter: AlertFilter; oneRule: boolean; unknownRule?: string } {
  const ids = q.rule !== undefined ? resolveRule(s, ruleNames(rules), q.rule) : undefined;
  const rule =
    q.rule === undefined
      ? undefined
      : ids === undefined
        ? { ruleIds: [] }
        : ids.length === 1 && ids[0] === q.rule
          ? { ruleId: q.rule }
          : { ruleIds: ids };
  const filter = queueFilter(
    q,
    ruleAndSource(s, rule, q.source, (id) => sourceOfRule(rules, id)),
  );
  return {
    filter,
    oneRule: ids?.length === 1,
    ...(q.rule !== undefined && ids === undefined ? { unknownRule: q.rule } : {}),
  };
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
    const q = parsed.output;
    const s = await alertsState(scope);
    const rules = scope.deps.reads.detection.rules;
    const { filter, unknownRule, oneRule } = resolvedFilter(s, rules, q);
    const sourceOf = (id: string) => sourceOfRule(rules, id);
    // Grouped by rule, unless asked otherwise or the rule filter names one rule (it would be one group).
    const flatView = q.view === 'flat' || (q.view === undefined && oneRule);
    const grouped = groupedQueue(s, filter, sourceOf, flatView ? 0 : GROUPS_PAGE_SIZE, flatView ? undefined : q.cursor);
    const flat = flatView ? queuePage(s, q, QUEUE_PAGE_SIZE, filter) : undefined;
    if (!grouped || (flatView && !flat))
      throw new HttpError(400, 'invalid query', ['cursor: not a cursor of this list and sort']);
    const url = c.req.path + new URL(c.req.url).search;
    const view: QueueView = {
      q,
      grouped,
      ...(flat ? { flat } : {}),
      ...(unknownRule !== undefined ? { unknownRule } : {}),
    };
    return scope.render('Alerts', <QueuePage view={view} scope={scope} url={url} />);
  },
};

const Ids = idsField(BULK_REVIEW_MAX);
const FilterFields = {
  'filter.status': optionalField(v.picklist(ALERT_STATUSES)),
  'filter.severity': optionalField(v.picklist(LEVELS)),
  'filter.rule': optionalField(v.pipe(v.string(), v.maxLength(256))),
  'filter.source': optionalField(v.pipe(v.string(), v.maxLength(256))),
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

/** The queue filter a bulk form carried, as the projection's filter (its rule and source resolved as the queue's). */
function carriedFilter(f: Record<string, unknown>, s: AlertsState, rules: DetectionState['rules']) {
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
  const { filter, unknownRule } = resolvedFilter(s, rules, parsed.output);
  if (unknownRule !== undefined)
    throw new HttpError(400, 'unknown rule', [
      `filter.rule: no rule has the id, title or name ${JSON.stringify(unknownRule)}`,
    ]);
  return filter;
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
      form.scope === 'matching'
        ? { filter: carriedFilter(form, await alertsState(scope), scope.deps.reads.detection.rules) }
        : { alertIds: ids };
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
    const matching =
      form.scope === 'matching'
        ? carriedFilter(form, await alertsState(scope), scope.deps.reads.detection.rules)
        : undefined;
    const { result } = await executeAudited(
      c,
      scope.deps,
      (m) => {
        const alerts = m.alerts;
        // Each alert once: a repeated id would record a second assignment with a stale `from`.
        const ids =
          matching !== undefined ? matchingAlerts(alerts, matching).map((a) => a.id) : [...new Set(form.ids ?? [])];
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
