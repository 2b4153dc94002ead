import { toJsonSchema } from '@valibot/to-json-schema';
import type * as v from 'valibot';
import { ROLES, allows, type Permission } from '../auth/roles.js';
import { NormalizedEventSchema } from '../events/normalized-event.js';
import { batchDescription } from './batch.js';
import { isPublic, type ErrorStatus, type Public, type RequestBody, type Route, type SchemaName } from './route.js';
import { ROUTES } from './route-table.js';

const schema = (s: v.GenericSchema) => toJsonSchema(s, { errorMode: 'ignore' }) as Record<string, unknown>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Statuses the guard answers on every route it runs on: unauthenticated, forbidden, throttled. */
const GUARD_STATUSES: readonly ErrorStatus[] = [401, 403, 429];

/** Statuses of every write: the store failed under it (503, outcome unknown), the disk is past its flood mark (507). */
const WRITE_STATUSES = [503, 507] as const;

/** Node's HTTP parser answers 431 for request headers over its limit, before any route runs. */
const PARSER_STATUSES = [431] as const;

/** Who may call, in words: the permission and the roles that hold it, or why the route is public. */
function permissionText(permission: Permission | Public): string {
  if (isPublic(permission)) return `none (${permission.public})`;
  const roles = ROLES.filter((r) => allows([r], permission));
  return `${permission} (${roles.length === ROLES.length ? 'any authenticated principal' : roles.join(', ')})`;
}

function parameters(r: Route): unknown[] {
  const path = Object.entries(r.params?.entries ?? {}).map(([name, s]) => ({
    name,
    in: 'path',
    required: true,
    schema: schema(s),
  }));
  const query = Object.entries(r.query?.entries ?? {}).map(([name, s]) => ({
    name,
    in: 'query',
    required: false,
    schema: schema(s),
  }));
  return [...path, ...query];
}

function requestBody(body: RequestBody): Record<string, unknown> {
  if ('media' in body) {
    return {
      required: true,
      content: Object.fromEntries(
        Object.entries(body.media).map(([type, description]) => [type, { schema: { description } }]),
      ),
    };
  }
  const content =
    'yaml' in body
      ? { 'application/yaml': { schema: { type: 'string', description: body.yaml } } }
      : {
          'application/json': { schema: schema('batch' in body ? batchDescription(body.batch) : body.json) },
          // A batch may also come as one record per line (src/http/body.ts, readBatchBody).
          ...('batch' in body
            ? {
                'application/x-ndjson': {
                  schema: { ...(schema(body.batch) as object), description: 'one record per line' },
                },
              }
            : {}),
          ...('batch' in body && body.text !== undefined
            ? { 'text/plain': { schema: { type: 'string', description: body.text } } }
            : {}),
        };
  return { required: true, content };
}

function responses(r: Route): Record<string, unknown> {
  const { status, description, schema: body, media } = r.success;
  const content = {
    ...(body ? { 'application/json': { schema: typeof body === 'string' ? ref(body) : schema(body) } } : {}),
    ...Object.fromEntries(
      Object.entries(media ?? {}).map(([type, text]) => [type, { schema: { type: 'string', description: text } }]),
    ),
  };
  const out: Record<string, unknown> = { [status]: { description, content } };
  const errors = new Set<number>([
    ...r.errors,
    ...(isPublic(r.permission) ? [] : GUARD_STATUSES),
    ...(r.method === 'get' ? [] : WRITE_STATUSES),
    ...PARSER_STATUSES,
  ]);
  for (const s of [...errors].sort((a, b) => a - b))
    out[s] = { description: 'ErrorResponse', content: { 'application/json': { schema: ref('ErrorResponse') } } };
  return out;
}

/** The response schemas every operation refers to by name. */
const COMPONENTS: Readonly<Record<SchemaName, unknown>> = {
  NormalizedEvent: schema(NormalizedEventSchema),
  CollectorSubmissionResult: {
    type: 'object',
    required: ['collectorId', 'sequence', 'graph', 'acceptedEvents'],
    properties: {
      collectorId: { type: 'string' },
      sequence: { type: 'integer' },
      graph: {
        type: 'object',
        required: ['entities', 'relationships'],
        properties: { entities: { type: 'integer' }, relationships: { type: 'integer' } },
      },
      acceptedEvents: { type: 'integer' },
    },
  },
  IngestionResult: {
    type: 'object',
    required: ['alerts', 'incidents'],
    properties: {
      accepted: {
        type: 'array',
        items: ref('NormalizedEvent'),
        description: 'absent when the request sent Prefer: return=minimal',
      },
      acceptedCount: { type: 'integer', description: 'instead of accepted, with Prefer: return=minimal' },
      duplicates: { type: 'integer', description: 'accepted events that were already stored or repeated in the batch' },
      alerts: { type: 'array', items: { type: 'object' } },
      incidents: { type: 'array', items: { type: 'object' } },
      refused: {
        type: 'array',
        description: 'the records of the batch that were not accepted (always empty on /api/v1/events)',
        items: {
          type: 'object',
          required: ['index', 'issues'],
          properties: {
            index: { type: 'integer', description: 'position of the record in the batch, from 0' },
            line: { type: 'integer', description: 'line of the record (from 1), when the body was read by lines' },
            issues: { type: 'array', items: { type: 'string' } },
          },
        },
      },
    },
  },
  Principal: {
    type: 'object',
    required: ['id', 'roles', 'displayName', 'loginName', 'authentication'],
    properties: {
      id: { type: 'string' },
      roles: { type: 'array', items: { type: 'string' } },
      displayName: { type: 'string' },
      loginName: { type: 'string' },
      authentication: { type: 'string' },
    },
  },
};

/** The OpenAPI 3.1 document, generated from the route table and the valibot schemas the routes validate with. */
export function openApiDocument(routes: readonly Route[] = ROUTES): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    (paths[r.path] ??= {})[r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      description: `Permission: ${permissionText(r.permission)}.`,
      security: isPublic(r.permission) ? [] : [{ bearer: [] }],
      parameters: parameters(r),
      ...(r.body ? { requestBody: requestBody(r.body) } : {}),
      responses: responses(r),
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Vigil',
      version: '1.0.0',
      description:
        'Vigil instance API (`/api/v1`). Generated from the route table and its valibot schemas; see docs/api.md.',
    },
    servers: [{ url: 'http://127.0.0.1:4173' }],
    components: {
      securitySchemes: {
        bearer: {
          type: 'http',
          scheme: 'bearer',
          description: 'An opaque `vgl_` token from `vigil api-token-generate`.',
        },
      },
      schemas: {
        ...COMPONENTS,
        ErrorResponse: {
          type: 'object',
          required: ['error'],
          properties: {
            error: { type: 'string' },
            issues: { type: 'array', items: { type: 'string' } },
            retryAfterSeconds: {
              type: 'integer',
              description: 'With 429, 503 or 507: seconds to wait, as in Retry-After.',
            },
            conflictingIds: {
              type: 'array',
              items: { type: 'string' },
              description: 'With 409 on ingestion: the event ids re-sent with different content.',
            },
          },
        },
      },
    },
    paths,
  };
}
