import type { Hono } from 'hono';
import * as v from 'valibot';
import { IsoDateTime } from '../../events/normalized-event.js';
import type { GraphState } from '../../projections/graph.js';
import { queryGraph } from '../../projections/graph-query.js';
import { listAudit } from '../../projections/audit.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { guard } from '../guard.js';
import { QueryLimit, canonicalIso } from '../query.js';
import { storedJson } from '../stored-json.js';


/** Query of `GET /api/v1/graph`. */
export const GraphQuerySchema = v.strictObject({
  entity: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(512))),
  kind: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  limit: v.optional(QueryLimit),
  cursor: v.optional(v.pipe(v.string(), v.maxLength(2048))),
});

/** Query of `GET /api/v1/audit`. */
export const AuditQuerySchema = v.strictObject({
  principal: v.optional(v.pipe(v.string(), v.maxLength(128))),
  status: v.optional(v.pipe(v.string(), v.regex(/^[1-5]\d\d$/, 'expected an HTTP status'), v.transform(Number))),
  route: v.optional(v.pipe(v.string(), v.maxLength(256))),
  method: v.optional(v.picklist(['GET', 'POST', 'PATCH', 'PUT', 'DELETE'])),
  since: v.optional(IsoDateTime),
  until: v.optional(IsoDateTime),
  limit: v.optional(QueryLimit),
  cursor: v.optional(v.pipe(v.string(), v.regex(/^\d{1,15}$/, 'not a cursor returned by this endpoint'), v.transform(Number))),
});


/** `/health`, `/api/v1/me`, `/api/v1/graph` and `/api/v1/audit`. */
export function coreRoutes(app: Hono<AppEnv>, deps: AppDeps, net: NetPolicy): void {
  app.get('/health', (c) => c.json({ status: 'ok' }));

  app.get('/api/v1/me', guard(deps, net, '/api/v1/me', 'read_principal', 'principal:read'), (c) => {
    const p = c.get('principal');
    return c.json({ id: p.id, roles: [...p.roles], displayName: p.displayName, loginName: p.loginName, authentication: p.authentication });
  });

  app.get('/api/v1/graph', guard(deps, net, '/api/v1/graph', 'read_graph', 'graph:read'), async (c) => {
    const q = parseOr400(GraphQuerySchema, c.req.query(), 'query');
    await deps.readYourWrites();
    const page = await deps.graph({
      limit: Math.min(q.limit ?? 200, deps.config.limits.pageSize),
      ...(q.entity !== undefined ? { entity: q.entity } : {}),
      ...(q.kind !== undefined ? { kind: q.kind } : {}),
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
    });
    if (!page) throw new HttpError(404, `entity ${q.entity} is not in the graph`);
    return storedJson(c, page);
  });

  app.get('/api/v1/audit', guard(deps, net, '/api/v1/audit', 'list_audit', 'audit:read'), async (c) => {
    const q = parseOr400(AuditQuerySchema, c.req.query(), 'query');
    await deps.readYourWrites();
    const page = listAudit(deps.reads, {
      ...(q.principal !== undefined ? { principal: q.principal } : {}),
      ...(q.status !== undefined ? { status: q.status } : {}),
      ...(q.route !== undefined ? { route: q.route } : {}),
      ...(q.method !== undefined ? { method: q.method } : {}),
      ...(q.since !== undefined ? { since: canonicalIso(q.since) } : {}),
      ...(q.until !== undefined ? { until: canonicalIso(q.until) } : {}),
    }, Math.min(q.limit ?? 100, deps.config.limits.pageSize), q.cursor);
    return c.json({ entries: page.entries, nextCursor: page.nextCursor === null ? null : String(page.nextCursor) });
  });
}
