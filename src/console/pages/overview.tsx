import { detectionPlan } from '../../alerting/plan.js';
import { LEVELS } from '../../detection/types.js';
import type { AlertsState, AlertView } from '../../projections/alerts.js';
import { listIncidents } from '../../projections/alerts-query.js';
import type { CollectorsState } from '../../projections/collectors.js';
import { listCollectors } from '../../projections/collectors-query.js';
import type { DetectionState } from '../../projections/detection.js';
import { lastHours, type SourceRates } from '../../projections/source-rates.js';
import type { SourcesState } from '../../projections/sources.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { HorizontalBars, StackedBars } from '../../web/components/chart.js';
import { shortTime } from '../../web/components/url.js';
import type { PageRoute, PageScope } from '../page-route.js';

/** Systems and open alerts listed on the overview at most. */
const LISTED = 10;

/** The hour label of a chart bucket (`19:00`). */
const hourLabel = (hour: string) => `${hour.slice(11, 13)}:00`;

/** Alerts first seen in each of the last 24 hours, per level (one pass over the alerts). */
function alertsByHour(alerts: AlertsState, hours: readonly string[]): { name: string; values: number[] }[] {
  const index = new Map(hours.map((h, i) => [h, i]));
  const counts = Object.fromEntries(LEVELS.map((l) => [l, hours.map(() => 0)])) as Record<string, number[]>;
  for (const a of alerts.alerts.values()) {
    const i = index.get(a.firstSeen.slice(0, 13));
    if (i !== undefined && counts[a.level]) counts[a.level]![i]!++;
  }
  return [...LEVELS].reverse().map((l) => ({ name: l, values: counts[l]! }));
}

/** Open alerts (not dismissed) by level and by status, and the most severe recent ones. */
function openAlerts(alerts: AlertsState): { byLevel: Record<string, number>; byStatus: Record<string, number>; top: AlertView[] } {
  const byLevel: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  const top: AlertView[] = [];
  for (const a of alerts.alerts.values()) {
    if (a.status === 'dismissed') continue;
    byLevel[a.level] = (byLevel[a.level] ?? 0) + 1;
    byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
    top.push(a);
    if (top.length > LISTED * 4) {
      top.sort((x, y) => y.severity - x.severity || (y.lastSeen < x.lastSeen ? -1 : 1));
      top.length = LISTED;
    }
  }
  top.sort((x, y) => y.severity - x.severity || (y.lastSeen < x.lastSeen ? -1 : 1));
  return { byLevel, byStatus, top: top.slice(0, LISTED) };
}

/**
 * The overview: what needs attention (open alerts by severity and status, the most severe ones),
 * how detection stands, and charts of alerts, events per source and systems reporting. It shows
 * titles, names, counts and times only, never an event's content, so the `console` role sees it whole.
 */
function Overview(props: { readonly scope: PageScope }) {
  const { scope } = props;
  const m = scope.deps.reads;
  const now = scope.deps.now();
  const hours = lastHours(now, 24);
  const alerts = m.state<AlertsState>('alerts');
  const open = openAlerts(alerts);
  const rates = m.state<SourceRates>('source-rates');
  const plan = detectionPlan(m.state<DetectionState>('detection'), m.state<SourcesState>('sources'), now, scope.deps.config.detection.freshnessHours);
  const incidents = listIncidents(alerts, 5);
  const systems = Object.entries(rates.systems).sort((a, b) => (a[1].lastAt < b[1].lastAt ? 1 : -1)).slice(0, LISTED);
  const collectors = listCollectors(m.state<CollectorsState>('collectors'));
  const linkAlerts = scope.can('alerts:read');
  return (
    <>
      <h1>Overview</h1>
      <div class="stats" id="stats" data-live="15">
        {[...LEVELS].reverse().map((l) => <div class="stat"><b>{open.byLevel[l] ?? 0}</b><span><SeverityBadge severity={l} /> open</span></div>)}
        <div class="stat"><b>{open.byStatus['open'] ?? 0}</b><span>new, not in review</span></div>
        <div class="stat"><b>{open.byStatus['in_review'] ?? 0}</b><span>in review</span></div>
        <div class="stat"><b>{incidents.filter((i) => i.status === 'open').length}</b><span>open incidents (recent)</span></div>
        <div class="stat"><b>{plan.summary.ready}/{plan.summary.rules}</b><span>rules ready ({plan.summary.blocked} blocked)</span></div>
      </div>
      <div class="grid">
        <section class="panel"><StackedBars title="Alerts raised, last 24 h, by severity" buckets={hours.map(hourLabel)} series={alertsByHour(alerts, hours)} classOf={(name) => `sev-${name}`} /></section>
        <section class="panel"><StackedBars title="Events stored per source, last 24 h" buckets={hours.map(hourLabel)} series={Object.entries(rates.byAdapter).map(([name, b]) => ({ name, values: hours.map((h) => b[h] ?? 0) }))} /></section>
      </div>
      <div class="grid">
        <section class="panel">
          <h2>Most severe open alerts</h2>
          {open.top.length === 0 ? <p class="empty">No open alert.</p> : (
            <table class="data">
              <thead><tr><th>Severity</th><th>Alert</th><th>Status</th><th>Assignee</th><th>Systems</th><th>Last seen</th></tr></thead>
              <tbody>{open.top.map((a) => (
                <tr>
                  <td><SeverityBadge severity={a.level} /></td>
                  <td>{linkAlerts ? <a href={`/alerts/${encodeURIComponent(a.id)}`}>{a.title}</a> : a.title}</td>
                  <td><StatusLabel status={a.status} /></td>
                  <td>{a.assignee ?? '—'}</td>
                  <td>{a.affectedSystems.slice(0, 3).join(', ')}</td>
                  <td>{shortTime(a.lastSeen)}</td>
                </tr>
              ))}</tbody>
            </table>
          )}
          {linkAlerts ? <p><a href="/alerts?status=open">All open alerts</a></p> : null}
        </section>
        <section class="panel">
          <h2>Systems reporting</h2>
          {systems.length === 0 ? <p class="empty">No system has sent events yet.</p> : (
            <HorizontalBars title="Events per system (most recent first)" rows={systems.map(([name, s]) => ({ label: name, value: s.events, note: `last ${shortTime(s.lastAt)} via ${s.adapter}` }))} />
          )}
          {collectors.length > 0 ? (
            <table class="data">
              <thead><tr><th>Collector</th><th class="num">Accepted</th><th class="num">Rejected</th><th>Last accepted</th></tr></thead>
              <tbody>{collectors.map((c) => <tr><td>{c.collectorId}</td><td class="num">{c.accepted}</td><td class="num">{c.rejected}</td><td>{shortTime(c.lastAcceptedAt ?? undefined) || '—'}</td></tr>)}</tbody>
            </table>
          ) : null}
        </section>
      </div>
    </>
  );
}

const overviewRoute: PageRoute = {
  method: 'get', path: '/', permission: 'principal:read', audit: 'console_overview',
  async handle(_c, scope) {
    if (!scope.can('console:read') && !scope.can('alerts:read')) {
      return scope.render('Overview', <section class="panel"><h1>Welcome, {scope.principal.displayName}</h1><p>Your roles ({scope.principal.roles.join(', ')}) open the pages in the navigation above.</p></section>);
    }
    await scope.deps.readYourWrites();
    return scope.render('Overview', <Overview scope={scope} />);
  },
};

/** The overview page. */
export const overviewPages: readonly PageRoute[] = [overviewRoute];
