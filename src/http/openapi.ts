import { toJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import { NormalizedEventSchema } from '../events/normalized-event.js';
import { AuditQuerySchema, GraphQuerySchema } from './routes/core.js';
import { ListEventsQuery } from './routes/events.js';
import { IngestQuery } from './routes/ingest.js';
import { EnrollBody, IssueTokenBody } from './routes/collectors.js';
import { EnvelopeSchema } from '../collector-protocol/envelope.js';
import { ListAlertsQuery, ListIncidentsQuery } from './routes/alerts.js';
import { RulePatchBody } from './routes/rules.js';
import { PromoteIncidentBody, ReviewAlertBody } from '../commands/review-alert.js';

type AnySchema = v.GenericSchema;

/** One operation of the published API. */
interface Operation {
  readonly method: 'get' | 'post' | 'patch';
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly permission: string;
  readonly pathParams?: Readonly<Record<string, readonly string[]>>;
  readonly query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
  readonly body?: AnySchema;
  /** The body is Sigma YAML (`application/yaml`). */
  readonly yamlBody?: boolean;
  readonly success: { status: number; description: string; schema?: AnySchema | Record<string, unknown> };
  readonly errors: readonly number[];
}

const schema = (s: AnySchema) => toJsonSchema(s, { errorMode: 'ignore' }) as Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const RawBody = v.union([v.array(v.record(v.string(), v.unknown())), v.strictObject({ records: v.array(v.record(v.string(), v.unknown())), context: v.optional(v.record(v.string(), v.unknown())) })]);
const IngestBody = v.union([v.array(NormalizedEventSchema), v.strictObject({ records: v.array(NormalizedEventSchema), context: v.optional(v.record(v.string(), v.unknown())) })]);

/** Every operation of the instance, in the order of the docs. */
export const OPERATIONS: readonly Operation[] = [
  { method: 'get', path: '/health', operationId: 'readHealth', summary: 'Aggregate health only', permission: 'none', success: { status: 200, description: '`{status}`' }, errors: [] },
  { method: 'get', path: '/api/v1/me', operationId: 'readPrincipal', summary: 'The authenticated principal (spec 2.5)', permission: 'any authenticated principal', success: { status: 200, description: 'Principal', schema: ref('Principal') }, errors: [401] },
  { method: 'post', path: '/api/v1/events', operationId: 'ingestEvents', summary: 'Ingest NormalizedEvents, all or nothing, idempotent by id', permission: 'ingest (ingestor, admin)', body: IngestBody, success: { status: 202, description: 'IngestionResult', schema: ref('IngestionResult') }, errors: [400, 401, 403, 409, 413, 415] },
  { method: 'post', path: '/api/v1/ingest/{normalizer}', operationId: 'ingestRaw', summary: 'Ingest raw records through a built-in normalizer (network-monitor, syslog-rfc5424, opentelemetry-log, mesh-vpn-logs, linux-journal); all or nothing', permission: 'ingest (ingestor, admin)', query: IngestQuery, pathParams: { normalizer: ['network-monitor', 'syslog-rfc5424', 'opentelemetry-log', 'mesh-vpn-logs', 'linux-journal'] }, body: RawBody, success: { status: 202, description: 'IngestionResult', schema: ref('IngestionResult') }, errors: [400, 401, 403, 413, 415] },
  { method: 'get', path: '/api/v1/events', operationId: 'listEvents', summary: 'Events newest first, from the evidence index', permission: 'events:read (viewer, analyst, admin)', query: ListEventsQuery, success: { status: 200, description: '`{events, nextCursor}`' }, errors: [400, 401, 403] },
  { method: 'get', path: '/api/v1/graph', operationId: 'readGraph', summary: 'Entities and typed relationships; one entity\'s neighbourhood with `entity`', permission: 'graph:read (viewer, analyst, rule_admin, admin)', query: GraphQuerySchema, success: { status: 200, description: '`{entities, relationships, kinds, relationshipTypes, nextCursor}`' }, errors: [400, 401, 403, 404] },
  { method: 'post', path: '/api/v1/rules', operationId: 'importRules', summary: 'Import Sigma rules: one rule, a multi-document stream or a collection (all or nothing)', permission: 'rules:write (rule_admin, admin)', yamlBody: true, success: { status: 201, description: '`{ruleIds}`' }, errors: [400, 401, 403, 413, 415] },
  { method: 'get', path: '/api/v1/rules', operationId: 'listRules', summary: 'Installed rules with author, level, state and source', permission: 'rules:read (viewer, analyst, rule_admin, admin)', success: { status: 200, description: '`{rules}`' }, errors: [401, 403] },
  { method: 'get', path: '/api/v1/rules/{id}', operationId: 'readRule', summary: 'One rule with its Sigma text', permission: 'rules:read (viewer, analyst, rule_admin, admin)', pathParams: { id: [] }, success: { status: 200, description: 'rule detail' }, errors: [401, 403, 404] },
  { method: 'patch', path: '/api/v1/rules/{id}', operationId: 'setRuleEnabled', summary: 'Enable or disable a rule', permission: 'rules:write (rule_admin, admin)', pathParams: { id: [] }, body: RulePatchBody, success: { status: 200, description: '`{id, enabled}`' }, errors: [400, 401, 403, 404, 415] },
  { method: 'get', path: '/api/v1/detection-plan', operationId: 'readDetectionPlan', summary: 'Which rules can fire: ready, degraded or blocked, with the missing capabilities and their fixes', permission: 'plan:read (viewer, analyst, rule_admin, admin)', success: { status: 200, description: 'DetectionPlan' }, errors: [401, 403] },
  { method: 'get', path: '/api/v1/alerts', operationId: 'listAlerts', summary: 'Alerts, most recently seen first', permission: 'alerts:read (viewer, analyst, admin)', query: ListAlertsQuery, success: { status: 200, description: '`{alerts, nextCursor}`' }, errors: [400, 401, 403] },
  { method: 'get', path: '/api/v1/alerts/{alertId}', operationId: 'readAlert', summary: 'Alert detail: match reason, evidence, affected systems, confidence, review history', permission: 'alerts:read (viewer, analyst, admin)', pathParams: { alertId: [] }, success: { status: 200, description: 'Alert' }, errors: [401, 403, 404] },
  { method: 'patch', path: '/api/v1/alerts/{alertId}', operationId: 'reviewAlert', summary: 'Set an alert status with a reason; appends to the review history', permission: 'alerts:review (analyst, admin)', pathParams: { alertId: [] }, body: ReviewAlertBody, success: { status: 200, description: '`{id, status}`' }, errors: [400, 401, 403, 404, 415] },
  { method: 'get', path: '/api/v1/incidents', operationId: 'listIncidents', summary: 'Incidents, most recently active first (an array)', permission: 'incidents:read (viewer, analyst, admin)', query: ListIncidentsQuery, success: { status: 200, description: 'array of Incident' }, errors: [400, 401, 403] },
  { method: 'post', path: '/api/v1/incidents', operationId: 'promoteIncident', summary: 'Promote alerts to an incident', permission: 'incidents:promote (analyst, admin)', body: PromoteIncidentBody, success: { status: 201, description: 'Incident' }, errors: [400, 401, 403, 415] },
  { method: 'get', path: '/api/v1/incidents/{id}', operationId: 'readIncident', summary: 'An incident with its alerts, entities and timeline', permission: 'incidents:read (viewer, analyst, admin)', pathParams: { id: [] }, success: { status: 200, description: 'Incident' }, errors: [401, 403, 404] },
  { method: 'get', path: '/api/v1/audit', operationId: 'listAudit', summary: 'The API audit trail, newest first', permission: 'audit:read (admin)', query: AuditQuerySchema, success: { status: 200, description: '`{entries, nextCursor}`' }, errors: [400, 401, 403] },
  { method: 'post', path: '/api/v1/collector/enrollment-tokens', operationId: 'issueEnrollmentToken', summary: 'Create a single-use, short-lived collector enrollment token (shown once)', permission: 'collectors:admin (admin)', body: IssueTokenBody, success: { status: 201, description: '`{tokenId, collectorId, expiresAt, token}`' }, errors: [400, 401, 403, 413, 415] },
  { method: 'post', path: '/api/v1/collector/enrollments', operationId: 'enrollCollector', summary: 'Enroll a collector key with a single-use token; starts a new epoch (docs/collector-protocol.md)', permission: 'none (the enrollment token in the body authenticates)', body: EnrollBody, success: { status: 201, description: '`{collectorId, epoch, keyFingerprint, nextSequence}`' }, errors: [400, 401, 403, 409, 413, 415] },
  { method: 'post', path: '/api/v1/collector/submissions', operationId: 'submitCollectorEnvelope', summary: 'Submit a signed collector envelope (spec 4.3, docs/collector-protocol.md)', permission: 'collector:submit (collector, admin)', body: EnvelopeSchema, success: { status: 202, description: 'Collector submission result', schema: ref('CollectorSubmissionResult') }, errors: [400, 401, 403, 409, 413, 415] },
  { method: 'get', path: '/api/v1/collectors', operationId: 'listCollectors', summary: 'Enrolled collectors: epoch, key fingerprint, last sequence, accepted and rejected counts', permission: 'collectors:admin (admin)', success: { status: 200, description: '`{collectors}`' }, errors: [401, 403] },
];

function parameters(op: Operation): unknown[] {
  const path = Object.entries(op.pathParams ?? {}).map(([name, values]) => ({ name, in: 'path', required: true, schema: values.length > 0 ? { type: 'string', enum: [...values] } : { type: 'string' } }));
  const query = Object.entries(op.query?.entries ?? {}).map(([name, s]) => ({ name, in: 'query', required: false, schema: schema(s as AnySchema) }));
  return [...path, ...query];
}

/** The OpenAPI 3.1 document, generated from the same valibot schemas the routes validate with. */
export function openApiDocument(): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    const responses: Record<string, unknown> = {
      [op.success.status]: { description: op.success.description, ...(op.success.schema ? { content: { 'application/json': { schema: 'type' in op.success.schema || '$ref' in op.success.schema ? op.success.schema : schema(op.success.schema as unknown as AnySchema) } } } : {}) },
    };
    for (const status of op.errors) responses[status] = { description: 'ErrorResponse', content: { 'application/json': { schema: ref('ErrorResponse') } } };
    (paths[op.path] ??= {})[op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      description: `Permission: ${op.permission}.`,
      ...(op.path.startsWith('/api/') && !op.permission.startsWith('none') ? { security: [{ bearer: [] }] } : { security: [] }),
      parameters: parameters(op),
      ...(op.body ? { requestBody: { required: true, content: { 'application/json': { schema: schema(op.body) } } } } : {}),
      ...(op.yamlBody ? { requestBody: { required: true, content: { 'application/yaml': { schema: { type: 'string', description: 'Sigma rule YAML' } } } } } : {}),
      responses,
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Vigil', version: '1.0.0', description: 'Vigil instance API (`/api/v1`). Generated from the valibot schemas; see docs/api.md.' },
    servers: [{ url: 'http://127.0.0.1:4173' }],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An opaque `vgl_` token from `vigil api-token-generate`.' } },
      schemas: {
        NormalizedEvent: schema(NormalizedEventSchema),
        ErrorResponse: { type: 'object', required: ['error'], properties: { error: { type: 'string' }, issues: { type: 'array', items: { type: 'string' } } } },
        CollectorSubmissionResult: { type: 'object', required: ['collectorId', 'sequence', 'graph', 'acceptedEvents'], properties: { collectorId: { type: 'string' }, sequence: { type: 'integer' }, graph: { type: 'object', required: ['entities', 'relationships'], properties: { entities: { type: 'integer' }, relationships: { type: 'integer' } } }, acceptedEvents: { type: 'integer' } } },
        IngestionResult: { type: 'object', required: ['accepted', 'alerts', 'incidents'], properties: { accepted: { type: 'array', items: ref('NormalizedEvent') }, alerts: { type: 'array', items: { type: 'object' } }, incidents: { type: 'array', items: { type: 'object' } } } },
        Principal: { type: 'object', required: ['id', 'roles', 'displayName', 'loginName', 'authentication'], properties: { id: { type: 'string' }, roles: { type: 'array', items: { type: 'string' } }, displayName: { type: 'string' }, loginName: { type: 'string' }, authentication: { type: 'string' } } },
      },
    },
    paths,
  };
}
