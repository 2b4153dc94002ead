import type { Hono } from 'hono';
import * as v from 'valibot';
import { PromoteIncidentBody, ReviewAlertBody, decidePromoteIncident, decideReviewAlert } from '../../commands/review-alert.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { ALERT_STATUSES, type AlertsState } from '../../projections/alerts.js';
import { incidentRollup, listAlerts, listIncidents } from '../../projections/alerts-query.js';
import { readJsonBody } from '../body.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { guard } from '../guard.js';
import { QueryLimit, canonicalIso } from '../query.js';
import { commandContext, executeAudited } from '../request-context.js';
import { storedJson } from '../stored-json.js';


/** Query of `GET /api/v1/alerts`. */
export const ListAlertsQuery = v.strictObject({
  status: v.optional(v.picklist(ALERT_STATUSES)),
  minSeverity: v.optional(v.pipe(v.string(), v.regex(/^(10|\d)(\.\d+)?$/, 'expected a number 0..10'), v.transform(Number))),
  rule: v.optional(v.pipe(v.string(), v.maxLength(256))),
  entity: v.optional(v.pipe(v.string(), v.maxLength(512))),
  since: v.optional(IsoDateTime),
  limit: v.optional(QueryLimit),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/** Query of `GET /api/v1/incidents`. */
export const ListIncidentsQuery = v.strictObject({ limit: v.optional(QueryLimit) });

/** Alert and incident routes. */
export function alertRoutes(app: Hono<AppEnv>, deps: AppDeps, net: NetPolicy): void {
  const state = () => deps.writer.models.state<AlertsState>('alerts');

  app.get('/api/v1/alerts', guard(deps, net, '/api/v1/alerts', 'list_alerts', 'alerts:read'), (c) => {
    const q = parseOr400(ListAlertsQuery, c.req.query(), 'query');
    const page = listAlerts(state(), {
      ...(q.status !== undefined ? { status: q.status } : {}), ...(q.minSeverity !== undefined ? { minSeverity: q.minSeverity } : {}),
      ...(q.rule !== undefined ? { ruleId: q.rule } : {}), ...(q.entity !== undefined ? { entity: q.entity } : {}),
      ...(q.since !== undefined ? { since: canonicalIso(q.since) } : {}),
    }, Math.min(q.limit ?? 100, deps.config.limits.pageSize), q.cursor);
    if (!page) throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    return c.json(page);
  });

  app.get('/api/v1/alerts/:alertId', guard(deps, net, '/api/v1/alerts/{alertId}', 'read_alert', 'alerts:read'), (c) => {
    const alert = state().alerts.get(c.req.param('alertId'));
    if (!alert) throw new HttpError(404, `alert ${c.req.param('alertId').slice(0, 128)} does not exist`);
    return storedJson(c, alert);
  });

  app.patch('/api/v1/alerts/:alertId', guard(deps, net, '/api/v1/alerts/{alertId}', 'review_alert', 'alerts:review'), async (c) => {
    const body = parseOr400(ReviewAlertBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const { result } = await executeAudited(c, deps, (m) => decideReviewAlert(m, c.req.param('alertId'), body, ctx), 200);
    return c.json(result, 200);
  });

  app.get('/api/v1/incidents', guard(deps, net, '/api/v1/incidents', 'list_incidents', 'incidents:read'), (c) => {
    const q = parseOr400(ListIncidentsQuery, c.req.query(), 'query');
    return c.json(listIncidents(state(), Math.min(q.limit ?? 1000, deps.config.limits.pageSize)));
  });

  app.post('/api/v1/incidents', guard(deps, net, '/api/v1/incidents', 'promote_incident', 'incidents:promote'), async (c) => {
    const body = parseOr400(PromoteIncidentBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const { result } = await executeAudited(c, deps, (m) => decidePromoteIncident(m, body, ctx), 201);
    return c.json(result, 201);
  });

  app.get('/api/v1/incidents/:id', guard(deps, net, '/api/v1/incidents/{id}', 'read_incident', 'incidents:read'), (c) => {
    const s = state();
    const incident = s.incidents.get(c.req.param('id'));
    if (!incident) throw new HttpError(404, `incident ${c.req.param('id').slice(0, 128)} does not exist`);
    const alerts = incident.alertIds.map((id) => s.alerts.get(id)).filter(Boolean).map((a) => ({ id: a!.id, status: a!.status, title: a!.title, ruleId: a!.ruleId, severity: a!.severity, firstSeen: a!.firstSeen, lastSeen: a!.lastSeen, affectedSystems: a!.affectedSystems }));
    return storedJson(c, { ...incident, ...incidentRollup(s, incident), alerts });
  });
}
