import { LEVELS } from '../../../detection/types.js';
import { readConsole } from '../../routes/console.js';
import type { ConsoleView } from '../../../projections/console-query.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { HorizontalBars, StackedBars } from '../../web/components/chart.js';
import { shortTime } from '../../web/components/url.js';
import type { PageRoute, PageScope } from '../page-route.js';
import { levelOf } from './incidents.js';
import { listRuleQuality, type QualityRow } from '../../../projections/rule-quality-query.js';
import { NoisiestRules } from './rule-quality.js';

/** Systems and open alerts listed on the overview at most. */
const LISTED = 10;

/** The last 24 hour labels ending at `now` (`YYYY-MM-DDTHH`, oldest first): the buckets of both charts. */
function lastHours(now: Date): string[] {
  const end = Math.floor(now.getTime() / 3_600_000) * 3_600_000;
  return Array.from({ length: 24 }, (_, i) => new Date(end - (23 - i) * 3_600_000).toISOString().slice(0, 13));
}

/** The deployment as this instance reports it, with the recovery action when the central VM looks missing. */
function Deployment(props: { readonly d: ConsoleView['deployment'] }) {
  const d = props.d;
  if (d.state === 'not_configured')
    return <p class="muted">Not a managed deployment (no setup authority configured).</p>;
  return (
    <>
      <dl class="facts">
        <dt>State</dt>
        <dd>
          <span class={d.state === 'reporting' ? 'state-ready' : 'state-degraded'}>{d.state.replace(/_/g, ' ')}</span>
        </dd>
        <dt>Deployment</dt>
        <dd>{d.deploymentId ?? '—'}</dd>
        <dt>Last delivered</dt>
        <dd>{shortTime(d.lastDeliveredAt ?? undefined) || '—'}</dd>
        {d.lastError ? (
          <>
            <dt>Last error</dt>
            <dd>{d.lastError}</dd>
          </>
        ) : null}
      </dl>
      {d.centralMissing.likely ? (
        <p class="notice notice-error" role="alert">
          The setup authority has not heard from this central VM: it may mark it missing.{' '}
          {d.centralMissing.recoveryAction}
        </p>
      ) : null}
    </>
  );
}

/**
 * What leaves the machine (admin only, as `GET /api/v1/exports`): each destination's state and lag (on a cluster's
 * follower, as the log records the leader's delivery).
 */
function Exports(props: { readonly destinations: ReturnType<NonNullable<PageScope['deps']['exports']>> }) {
  const ds = props.destinations;
  return (
    <>
      <h2>Export</h2>
      {ds.length === 0 ? (
        <p class="muted">Off: nothing leaves this machine (export.destinations is empty).</p>
      ) : (
        <table class="data">
          <thead>
            <tr>
              <th>Destination</th>
              <th>Carries</th>
              <th>State</th>
              <th>Behind</th>
              <th>Last success</th>
              <th>Last error</th>
            </tr>
          </thead>
          <tbody>
            {ds.map((d) => (
              <tr>
                <td>
                  {d.name} <span class="muted">{d.kind}</span>
                </td>
                <td>
                  {d.carries.join(', ')}
                  {d.includeRaw ? ' + raw' : ''}
                </td>
                <td
                  class={
                    d.state === 'failing' ? 'state-blocked' : d.state === 'retrying' ? 'state-degraded' : 'state-ready'
                  }
                >
                  {d.state}
                  {d.deliveredBy ? <span class="muted"> by the leader</span> : null}
                </td>
                <td>{d.lagRecords} records</td>
                <td>{d.lastSuccessAt ? shortTime(d.lastSuccessAt) : '—'}</td>
                <td>{d.lastError ? `${shortTime(d.lastError.at)}: ${d.lastError.message}` : '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/**
 * The overview: the console projection (spec 5.2) as a person wants to see it: what needs attention
 * (open alerts by severity and status, the most severe ones), charts of alerts and of events per
 * source over the last 24 hours, systems reporting, the detection plan and the deployment. It holds
 * names, counts, states and times only, never an event's content, so the `console` role sees it whole.
 */
function Overview(props: {
  readonly scope: PageScope;
  readonly view: ConsoleView;
  readonly hours: string[];
  readonly noisiest: readonly QualityRow[];
}) {
  const { scope, view, hours } = props;
  const label = (h: string) => `${h.slice(11, 13)}:00`;
  const top = [...view.alerts.items]
    .sort((x, y) => y.severity - x.severity || (y.lastSeen < x.lastSeen ? -1 : 1))
    .slice(0, LISTED);
  const linkAlerts = scope.can('alerts:read');
  const plan = view.detectionPlan.summary;
  return (
    <>
      <h1>Overview</h1>
      <div class="stats" id="stats" data-live="30">
        {[...LEVELS].reverse().map((l) => (
          <div class="stat">
            <b>{view.alerts.openBySeverity[l] ?? 0}</b>
            <span>
              <SeverityBadge severity={l} /> open
            </span>
          </div>
        ))}
        <div class="stat">
          <b>{view.alerts.byStatus['open'] ?? 0}</b>
          <span>new, not in review</span>
        </div>
        <div class="stat">
          <b>{view.alerts.byStatus['in_review'] ?? 0}</b>
          <span>in review</span>
        </div>
        <div class="stat">
          <b>{view.alerts.unassigned}</b>
          <span>open, unassigned</span>
        </div>
        <div class="stat">
          <b>
            {view.incidents.total - (view.incidents.byStatus['closed'] ?? 0) - (view.incidents.byStatus['merged'] ?? 0)}
          </b>
          <span>incidents not closed</span>
        </div>
        <div class="stat">
          <b>
            {view.systems.live}/{view.systems.total}
          </b>
          <span>systems reporting</span>
        </div>
        <div class="stat">
          <b>
            {plan.ready}/{plan.rules}
          </b>
          <span>rules ready ({plan.blocked} blocked)</span>
        </div>
      </div>
      <div class="grid">
        <section class="panel">
          <StackedBars
            title="Alerts raised, last 24 h, by severity"
            buckets={hours.map(label)}
            series={[...LEVELS]
              .reverse()
              .map((l) => ({ name: l, values: view.alerts.perHourByLevel[l] ?? hours.map(() => 0) }))}
            classOf={(name) => `sev-${name}`}
          />
        </section>
        <section class="panel">
          <StackedBars
            title="Events stored per source, last 24 h"
            buckets={hours.map(label)}
            series={view.sources.map((s) => ({ name: s.adapter, values: s.perHour }))}
          />
        </section>
      </div>
      <div class="grid">
        <section class="panel">
          <h2>Most severe open alerts</h2>
          {top.length === 0 ? (
            <p class="empty">No open alert.</p>
          ) : (
            <table class="data">
              <thead>
                <tr>
                  <th>Severity</th>
                  <th>Alert</th>
                  <th>Status</th>
                  <th>Assignee</th>
                  <th>Systems</th>
                  <th>Last seen</th>
                </tr>
              </thead>
              <tbody>
                {top.map((a) => (
                  <tr>
                    <td>
                      <SeverityBadge severity={a.level} />
                    </td>
                    <td>{linkAlerts ? <a href={`/alerts/${encodeURIComponent(a.id)}`}>{a.title}</a> : a.title}</td>
                    <td>
                      <StatusLabel status={a.status} />
                    </td>
                    <td>{a.assignee ?? '—'}</td>
                    <td>{a.affectedSystems.slice(0, 3).join(', ')}</td>
                    <td>{shortTime(a.lastSeen)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {linkAlerts ? (
            <p>
              <a href="/alerts?status=open">All open alerts</a>
            </p>
          ) : null}
          {view.incidents.items.length > 0 ? (
            <>
              <h2>Recent incidents</h2>
              <ul>
                {view.incidents.items.slice(0, 5).map((i) => (
                  <li>
                    <SeverityBadge severity={levelOf(i.severity)} />{' '}
                    {scope.can('incidents:read') ? (
                      <a href={`/incidents/${encodeURIComponent(i.id)}`}>{i.title}</a>
                    ) : (
                      i.title
                    )}{' '}
                    <StatusLabel status={i.status} />{' '}
                    <span class="muted">
                      {i.alertCount} alerts, {shortTime(i.lastSeen)}
                    </span>
                  </li>
                ))}
              </ul>
            </>
          ) : null}
        </section>
        <section class="panel">
          <h2>Systems reporting</h2>
          {view.systems.items.length === 0 ? (
            <p class="empty">No system has sent events yet.</p>
          ) : (
            <HorizontalBars
              title="Events in the last 24 h per system (most recent report first)"
              rows={view.systems.items.slice(0, LISTED).map((s) => ({
                label: s.name,
                value: s.events24h,
                note: `${s.live ? 'live' : 'quiet'}, last ${shortTime(s.lastReportAt)}`,
              }))}
            />
          )}
          <h2>Detection plan</h2>
          <p>
            <span class="state-ready">{plan.ready} ready</span> ·{' '}
            <span class="state-degraded">{plan.degraded} degraded</span> ·{' '}
            <span class="state-blocked">{plan.blocked} blocked</span> · {plan.disabled} disabled
            {scope.can('plan:read') ? (
              <>
                {' '}
                · <a href="/plan">the plan</a>
              </>
            ) : null}
          </p>
          <h2>Deployment</h2>
          <Deployment d={view.deployment} />
          {scope.can('exports:read') ? <Exports destinations={scope.deps.exports?.() ?? []} /> : null}
        </section>
      </div>
      <NoisiestRules rows={props.noisiest} rules={scope.can('rules:read')} alerts={scope.can('alerts:read')} />
    </>
  );
}

/** The rules that raised the most alerts (those that raised none left out), as of the read the overview made. */
function noisiestRules(scope: PageScope): QualityRow[] {
  const reads = scope.deps.reads;
  const page = listRuleQuality(reads.ruleQuality, reads.detection.rules, 'noisiest', LISTED);
  return (page?.rules ?? []).filter((r) => r.quality.alertsRaised > 0);
}

const overviewRoute: PageRoute = {
  method: 'get',
  path: '/',
  permission: 'principal:read',
  audit: 'console_overview',
  async handle(_c, scope) {
    if (!scope.can('console:read')) {
      return scope.render(
        'Overview',
        <section class="panel">
          <h1>Welcome, {scope.principal.displayName}</h1>
          <p>Your roles ({scope.principal.roles.join(', ')}) open the pages in the navigation above.</p>
        </section>,
      );
    }
    const view = await readConsole(scope.deps);
    return scope.render(
      'Overview',
      <Overview scope={scope} view={view} hours={lastHours(scope.deps.now())} noisiest={noisiestRules(scope)} />,
    );
  },
};

/** The overview page. */
export const overviewPages: readonly PageRoute[] = [overviewRoute];
