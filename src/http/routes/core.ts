import * as v from 'valibot';
import { IsoDateTime } from '../../events/normalized-event.js';
import type { GraphState } from '../../projections/graph.js';
import { GraphPageSchema, queryGraph } from '../../projections/graph-query.js';
import { decodeCursor } from '../../projections/cursor.js';
import { AuditEntrySchema, listAudit } from '../../projections/audit.js';
import { HttpError, parseOr400 } from '../errors.js';
import { canonicalIso, QueryCursor, QueryLimit } from '../query.js';
import { route, type Route } from '../route.js';
import { storedJson } from '../stored-json.js';

/** Query of `GET /api/v1/graph`. */
export const GraphQuerySchema = v.strictObject({
  entity: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(512))),
  kind: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  limit: v.optional(QueryLimit),
  cursor: v.optional(QueryCursor),
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
  cursor: v.optional(
    v.pipe(v.string(), v.regex(/^\d{1,15}$/, 'not a cursor returned by this endpoint'), v.transform(Number)),
  ),
  credential: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[0-9a-f]{12}$/, 'expected a credential fingerprint (12 hex digits, as vigil credential list shows)'),
    ),
  ),
});

const readHealthRoute = route({
  method: 'get',
  path: '/health',
  operationId: 'readHealth',
  summary: 'Aggregate health only',
  permission: {
    public: 'load balancers and monitors probe it without credentials; it tells nothing but `ok` or `degraded`',
  },
  // Probes may add parameters of their own (a cache buster): they are ignored.
  query: v.object({}),
  success: {
    status: 200,
    description: "`{status}`: `ok`, or `degraded` while the store's disk is past its low mark (docs/monitoring.md)",
    schema: v.strictObject({ status: v.picklist(['ok', 'degraded']) }),
  },
  errors: [],
  handle: (c, { deps }) => c.json({ status: deps.monitor?.status() ?? 'ok' }),
});

const readPrincipalRoute = route({
  method: 'get',
  path: '/api/v1/me',
  operationId: 'readPrincipal',
  summary: 'The authenticated principal (spec 2.5)',
  permission: 'principal:read',
  audit: 'read_principal',
  success: { status: 200, description: 'Principal', schema: 'Principal' },
  errors: [],
  handle: (c) => {
    const p = c.get('principal');
    return c.json({
      id: p.id,
      roles: [...p.roles],
      displayName: p.displayName,
      loginName: p.loginName,
      authentication: p.authentication,
    });
  },
});

const readGraphRoute = route({
  method: 'get',
  path: '/api/v1/graph',
  operationId: 'readGraph',
  summary: "Entities and typed relationships; one entity's neighbourhood with `entity`",
  permission: 'graph:read',
  audit: 'read_graph',
  query: GraphQuerySchema,
  success: {
    status: 200,
    description: '`{entities, relationships, kinds, relationshipTypes, nextCursor}`',
    schema: GraphPageSchema,
  },
  errors: [400, 404],
  handle: async (c, { deps }) => {
    const q = parseOr400(GraphQuerySchema, c.req.query(), 'query');
    // Graph cursors are entity keys; anything else (garbage, another listing's cursor) is refused as
    // the other listings refuse it, rather than silently restarting at the first page.
    if (q.cursor !== undefined && typeof decodeCursor(q.cursor) !== 'string')
      throw new HttpError(400, 'invalid query', ['cursor: not a cursor returned by this endpoint']);
    await deps.readYourWrites();
    const page = await deps.graph({
      limit: Math.min(q.limit ?? 200, deps.config.limits.pageSize),
      ...(q.entity !== undefined ? { entity: q.entity } : {}),
      ...(q.kind !== undefined ? { kind: q.kind } : {}),
      ...(q.cursor !== undefined ? { cursor: q.cursor } : {}),
    });
    if (!page) throw new HttpError(404, `entity ${q.entity} is not in the graph`);
    return storedJson(c, page);
  },
});

const listAuditRoute = route({
  method: 'get',
  path: '/api/v1/audit',
  operationId: 'listAudit',
  summary: 'The API audit trail, newest first',
  permission: 'audit:read',
  audit: 'list_audit',
  query: AuditQuerySchema,
  success: {
    status: 200,
    description: '`{entries, nextCursor}`: access records, refusal summaries among them (`count`, `firstAt`, ...)',
    schema: v.strictObject({ entries: v.array(AuditEntrySchema), nextCursor: v.nullable(v.string()) }),
  },
  errors: [400],
  handle: async (c, { deps }) => {
    const q = parseOr400(AuditQuerySchema, c.req.query(), 'query');
    await deps.readYourWrites();
    const page = listAudit(
      deps.reads,
      {
        ...(q.principal !== undefined ? { principal: q.principal } : {}),
        ...(q.status !== undefined ? { status: q.status } : {}),
        ...(q.route !== undefined ? { route: q.route } : {}),
        ...(q.method !== undefined ? { method: q.method } : {}),
        ...(q.since !== undefined ? { since: canonicalIso(q.since) } : {}),
        ...(q.until !== undefined ? { until: canonicalIso(q.until) } : {}),
        ...(q.credential !== undefined ? { credential: q.credential } : {}),
      },
      Math.min(q.limit ?? 100, deps.config.limits.pageSize),
      q.cursor,
    );
    return c.json({ entries: page.entries, nextCursor: page.nextCursor === null ? null : String(page.nextCursor) });
  },
});

/**
 * `/health`, `/api/v1/me`, `/api/v1/graph` and `/api/v1/audit`; the graph and the audit trail see every write
 * acknowledged before the request.
 */
export const coreRoutes: readonly Route[] = [readHealthRoute, readPrincipalRoute, readGraphRoute, listAuditRoute];
