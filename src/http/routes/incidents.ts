import * as v from 'valibot';
import { AddIncidentAlertsBody, decideAddIncidentAlerts } from '../../commands/add-incident-alerts.js';
import { AssignAlertBody } from '../../commands/assign-alert.js';
import { decideAssignIncident } from '../../commands/assign-incident.js';
import { ChangeIncidentStatusBody, decideIncidentStatus } from '../../commands/change-incident-status.js';
import { MergeIncidentBody, decideMergeIncident } from '../../commands/merge-incidents.js';
import { PromoteIncidentBody, decidePromoteIncident } from '../../commands/review-alert.js';
import { INCIDENT_STATUSES } from '../../projections/alerts.js';
import {
  HISTORY_SHOWN,
  incidentAlertsPage,
  incidentDetail,
  listIncidents,
  namesPage,
  timelinePage,
} from '../../projections/alerts-query.js';
import { readJsonBody } from '../body.js';
import type { AppDeps } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { QueryLimit } from '../query.js';
import { commandContext, executeAudited } from '../request-context.js';
import { route, type Route } from '../route.js';
import { runTargeted } from '../alerts-command.js';
import { alertsView, ownedListRoute } from './alert-lists.js';
import {
  AssigneeAnswer,
  IncidentAlertLineSchema,
  IncidentDetailSchema,
  IncidentListSchema,
  IncidentTimelineEntrySchema,
} from '../../projections/alerts-answers.js';
import { storedJson } from '../stored-json.js';

/** Path of `/api/v1/incidents/{id}`: an incident id (an unknown one is a 404). */
export const IncidentIdParams = v.object({ id: v.string() });

/** Query of `GET /api/v1/incidents`. */
export const ListIncidentsQuery = v.strictObject({
  status: v.optional(v.picklist([...INCIDENT_STATUSES, 'merged'])),
  limit: v.optional(QueryLimit),
});

const listIncidentsRoute = route({
  method: 'get',
  path: '/api/v1/incidents',
  operationId: 'listIncidents',
  summary: 'Incidents, most recently active first (an array)',
  permission: 'incidents:read',
  audit: 'list_incidents',
  query: ListIncidentsQuery,
  success: { status: 200, description: 'array of Incident', schema: IncidentListSchema },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(ListIncidentsQuery, c.req.query(), 'query');
    return c.json(
      listIncidents(await alertsView(deps), Math.min(q.limit ?? 1000, deps.config.limits.pageSize), q.status),
    );
  },
});

const promoteIncidentRoute = route({
  method: 'post',
  path: '/api/v1/incidents',
  operationId: 'promoteIncident',
  summary: 'Promote alerts to an incident',
  permission: 'incidents:promote',
  audit: 'promote_incident',
  body: { json: PromoteIncidentBody },
  success: {
    status: 201,
    description: 'Incident: as `GET /api/v1/incidents/{id}` answers it (origin, status, alerts, timeline)',
    schema: IncidentDetailSchema,
  },
  errors: [400, 415],
  handle: async (c, { deps }) => {
    const body = parseOr400(PromoteIncidentBody, await readJsonBody(c, deps.config.limits.bodyBytes), 'body');
    const ctx = commandContext(c, deps);
    const { result } = await executeAudited(c, deps, (m) => decidePromoteIncident(m.alerts, body, ctx), 201);
    return storedJson(c, written(deps, result.id), 201);
  },
});

/** An incident just written, from the write side's models (updated in the same turn as its batch). */
function written(deps: AppDeps, id: string) {
  return incidentDetail(deps.reads.alerts, id)!;
}

const changeIncidentStatusRoute = route({
  method: 'patch',
  path: '/api/v1/incidents/{id}',
  operationId: 'changeIncidentStatus',
  summary:
    'Move an incident through its lifecycle (open, investigating, contained, closed) with a reason; recorded in its ' +
    'timeline',
  permission: 'incidents:promote',
  audit: 'change_incident_status',
  params: IncidentIdParams,
  body: { json: ChangeIncidentStatusBody },
  success: {
    status: 200,
    description: '`{id, status}`',
    schema: v.strictObject({ id: v.string(), status: v.picklist(INCIDENT_STATUSES) }),
  },
  errors: [400, 404, 409, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'id', ChangeIncidentStatusBody, decideIncidentStatus, 200);
    return c.json(result, 200);
  },
});

const assignIncidentRoute = route({
  method: 'put',
  path: '/api/v1/incidents/{id}/assignee',
  operationId: 'assignIncident',
  summary: 'Assign an incident to a principal, or unassign it (`null`); recorded in its timeline',
  permission: 'incidents:promote',
  audit: 'assign_incident',
  params: IncidentIdParams,
  body: { json: AssignAlertBody },
  success: { status: 200, description: '`{id, assignee}`', schema: AssigneeAnswer },
  errors: [400, 404, 409, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'id', AssignAlertBody, decideAssignIncident, 200);
    return c.json(result, 200);
  },
});

const mergeIncidentRoute = route({
  method: 'post',
  path: '/api/v1/incidents/{id}/merge',
  operationId: 'mergeIncident',
  summary: 'Merge this incident into another (`into`): its alerts move there, it becomes `merged` with `mergedInto`',
  permission: 'incidents:promote',
  audit: 'merge_incident',
  params: IncidentIdParams,
  body: { json: MergeIncidentBody },
  success: {
    status: 200,
    description: '`{id, mergedInto, alertIds, alertCount}`: the first 200 alerts moved, and how many',
    schema: v.strictObject({
      id: v.string(),
      mergedInto: v.string(),
      alertIds: v.array(v.string()),
      alertCount: v.pipe(v.number(), v.integer()),
    }),
  },
  errors: [400, 404, 409, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'id', MergeIncidentBody, decideMergeIncident, 200);
    return c.json(
      { ...result, alertIds: result.alertIds.slice(0, HISTORY_SHOWN), alertCount: result.alertIds.length },
      200,
    );
  },
});

const addIncidentAlertsRoute = route({
  method: 'post',
  path: '/api/v1/incidents/{id}/alerts',
  operationId: 'addIncidentAlerts',
  summary: 'Promote alerts into an existing incident (alerts in another incident move here)',
  permission: 'incidents:promote',
  audit: 'add_incident_alerts',
  params: IncidentIdParams,
  body: { json: AddIncidentAlertsBody },
  success: {
    status: 200,
    description: 'Incident, as `GET /api/v1/incidents/{id}` answers it',
    schema: IncidentDetailSchema,
  },
  errors: [400, 404, 409, 415],
  handle: async (c, { deps }) => {
    const result = await runTargeted(c, deps, 'id', AddIncidentAlertsBody, decideAddIncidentAlerts, 200);
    return storedJson(c, written(deps, result.id), 200);
  },
});

const readIncidentRoute = route({
  method: 'get',
  path: '/api/v1/incidents/{id}',
  operationId: 'readIncident',
  summary:
    'An incident with its alerts, entities and timeline (the 200 most recently seen alerts, the first 200 entities, ' +
    'the newest 200 timeline entries and merged incidents, with `totals`)',
  permission: 'incidents:read',
  audit: 'read_incident',
  params: IncidentIdParams,
  success: { status: 200, description: 'Incident', schema: IncidentDetailSchema },
  errors: [404],
  handle: async (c, { deps }) => {
    const detail = incidentDetail(await alertsView(deps), c.req.param('id'));
    if (!detail) throw new HttpError(404, `incident ${c.req.param('id').slice(0, 128)} does not exist`);
    return storedJson(c, detail);
  },
});

const incidentAlertsRoute = ownedListRoute({
  owner: 'incident',
  part: 'alerts',
  field: 'alerts',
  operationId: 'listIncidentAlerts',
  summary: "An incident's alerts as lines, most recently seen first, a page at a time",
  page: (s, incident, limit, cursor) => incidentAlertsPage(s, incident.id, limit, cursor),
  item: IncidentAlertLineSchema,
});
const incidentEntitiesRoute = ownedListRoute({
  owner: 'incident',
  part: 'entities',
  field: 'entities',
  operationId: 'listIncidentEntities',
  summary: "An incident's entities in the order they joined, a page at a time",
  page: (_s, incident, limit, cursor) => namesPage(incident.entities, limit, cursor),
  item: v.string(),
});
const incidentTimelineRoute = ownedListRoute({
  owner: 'incident',
  part: 'timeline',
  field: 'entries',
  operationId: 'readIncidentTimeline',
  summary: "An incident's whole timeline, oldest first, a page at a time",
  page: (_s, incident, limit, cursor) => timelinePage(incident.timeline, limit, cursor),
  item: IncidentTimelineEntrySchema,
});

/**
 * Incident routes: list, promote, read (and its paged lists), and the lifecycle (status, assignee, merge, alerts
 * promoted into one).
 */
export const incidentRoutes: readonly Route[] = [
  listIncidentsRoute,
  promoteIncidentRoute,
  readIncidentRoute,
  incidentAlertsRoute,
  incidentEntitiesRoute,
  incidentTimelineRoute,
  changeIncidentStatusRoute,
  assignIncidentRoute,
  mergeIncidentRoute,
  addIncidentAlertsRoute,
];
