import { HttpError } from '../../http/errors.js';
import type { AlertView, IncidentView } from '../../projections/alerts.js';
import { incidentRollup, listIncidents } from '../../projections/alerts-query.js';
import { SeverityBadge, StatusLabel } from '../../web/components/badges.js';
import { Table } from '../../web/components/table.js';
import { Timeline } from '../../web/components/timeline.js';
import { shortTime } from '../../web/components/url.js';
import type { PageRoute } from '../page-route.js';
import { alertsState } from './alerts.js';

/** Incidents listed at most (most recently active first), as the API's default page. */
const INCIDENTS_LISTED = 500;

/** The Sigma level name of a 0..10 severity, for its badge. */
export function levelOf(severity: number): string {
  return severity >= 10 ? 'critical' : severity >= 8 ? 'high' : severity >= 5 ? 'medium' : severity >= 3 ? 'low' : 'informational';
}

type IncidentRow = ReturnType<typeof listIncidents>[number];

const listRoute: PageRoute = {
  method: 'get', path: '/incidents', permission: 'incidents:read', audit: 'console_incidents',
  async handle(_c, scope) {
    const rows = listIncidents(await alertsState(scope), INCIDENTS_LISTED);
    return scope.render('Incidents', (
      <>
        <h1>Incidents <span class="muted">({rows.length})</span></h1>
        <Table<IncidentRow> id="incidents" keyboard rows={rows} rowKey={(i) => i.id} rowHref={(i) => `/incidents/${encodeURIComponent(i.id)}`} empty="No incident yet." columns={[
          { header: 'Severity', cell: (i) => <SeverityBadge severity={levelOf(i.severity)} /> },
          { header: 'Incident', cell: (i) => <a href={`/incidents/${encodeURIComponent(i.id)}`}>{i.title}</a> },
          { header: 'Status', cell: (i) => <StatusLabel status={i.status} /> },
          { header: 'Origin', cell: (i) => i.origin },
          { header: 'Alerts', class: 'num', cell: (i) => String(i.alertIds.length) },
          { header: 'Entities', cell: (i) => i.entities.slice(0, 4).join(', ') + (i.entities.length > 4 ? ` +${i.entities.length - 4}` : '') },
          { header: 'Last activity', cell: (i) => shortTime(i.lastSeen) },
        ]} />
      </>
    ));
  },
};

const detailRoute: PageRoute = {
  method: 'get', path: '/incidents/{id}', permission: 'incidents:read', audit: 'console_incident',
  async handle(c, scope) {
    const s = await alertsState(scope);
    const incident: IncidentView | undefined = s.incidents.get(c.req.param('id')!);
    if (!incident) throw new HttpError(404, `incident ${c.req.param('id')!.slice(0, 128)} does not exist`);
    const rollup = incidentRollup(s, incident);
    const alerts = incident.alertIds.map((id) => s.alerts.get(id)).filter((a): a is AlertView => a !== undefined);
    return scope.render(incident.title, (
      <>
        <h1><SeverityBadge severity={levelOf(rollup.severity)} /> {incident.title}</h1>
        <section class="panel">
          <dl class="facts">
            <dt>Status</dt><dd><StatusLabel status={rollup.status} /></dd>
            <dt>Origin</dt><dd>{incident.origin}</dd>
            <dt>First seen</dt><dd>{shortTime(incident.firstSeen)}</dd>
            <dt>Last activity</dt><dd>{shortTime(incident.lastSeen)}</dd>
            <dt>Entities</dt><dd>{incident.entities.map((e) => <><a href={`/graph?entity=${encodeURIComponent(e)}`}>{e}</a> </>)}</dd>
          </dl>
        </section>
        <h2>Alerts ({alerts.length})</h2>
        <Table<AlertView> rows={alerts} rowKey={(a) => a.id} empty="No alert." columns={[
          { header: 'Severity', cell: (a) => <SeverityBadge severity={a.level} /> },
          { header: 'Alert', cell: (a) => (scope.can('alerts:read') ? <a href={`/alerts/${encodeURIComponent(a.id)}`}>{a.title}</a> : a.title) },
          { header: 'Status', cell: (a) => <StatusLabel status={a.status} /> },
          { header: 'Systems', cell: (a) => a.affectedSystems.join(', ') },
          { header: 'Last seen', cell: (a) => shortTime(a.lastSeen) },
        ]} />
        <h2>Timeline</h2>
        <section class="panel">
          <Timeline label="Incident timeline" empty="Nothing happened yet." entries={incident.timeline.map((t) => ({
            at: t.at, title: t.what, ...(t.principal ? { who: t.principal } : {}),
            ...(t.alertId ? { detail: <a href={`/alerts/${encodeURIComponent(t.alertId)}`}>{s.alerts.get(t.alertId)?.title ?? t.alertId}</a> } : {}),
          }))} />
        </section>
      </>
    ));
  },
};

/** The incident list and detail pages. */
export const incidentPages: readonly PageRoute[] = [listRoute, detailRoute];
