import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import type { Context, MiddlewareHandler } from 'hono';
import { decideIngestRaw } from '../../commands/ingest-raw.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { opentelemetryLog } from '../../normalizers/opentelemetry-log.js';
import { splitExportRequest, countLogRecords } from '../../normalizers/otlp/split-request.js';
import {
  decodeExportRequest,
  exportResponseJson,
  exportResponseProto,
  rpcCodeOf,
  statusProto,
  type ExportResult,
} from '../../normalizers/otlp/otlp-codec.js';
import { admitIngest } from '../admission.js';
import { parseJsonBytes, readBodyBytes } from '../body.js';
import type { AppEnv } from '../env.js';
import * as v from 'valibot';
import { HttpError } from '../errors.js';
import { executeAudited } from '../request-context.js';
import { route, type Route } from '../route.js';

const inflate = promisify(gunzip);
const PROTOBUF = 'application/x-protobuf';
const OTLP_PATH = '/api/v1/otlp/v1/logs';

/** Whether the request is in the binary protobuf encoding (otherwise JSON). */
function isProtobuf(c: Context): boolean {
  return /^application\/(x-)?protobuf\b/i.test(c.req.header('content-type') ?? '');
}

/**
 * Answers every error of the OTLP endpoint as OTLP/HTTP says: a google.rpc.Status in the request's
 * encoding, with the HTTP status (and Retry-After) unchanged. The JSON form also carries `error`
 * (and `issues`), so it is an ErrorResponse too.
 */
function otlpErrors(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    await next();
    const err = c.error;
    if (!err) return;
    const status = err instanceof HttpError ? err.status : 500;
    const message = err instanceof HttpError ? err.message : 'internal error';
    const issues = err instanceof HttpError && err.issues && err.issues.length > 0 ? [...err.issues] : undefined;
    const full = issues ? `${message}: ${issues.slice(0, 5).join('; ')}` : message;
    const headers = new Headers({ 'cache-control': 'no-store' });
    const retryAfter = c.res.headers.get('retry-after');
    if (retryAfter) headers.set('retry-after', retryAfter);
    if (isProtobuf(c)) {
      headers.set('content-type', PROTOBUF);
      c.res = new Response(statusProto(rpcCodeOf(status), full), { status, headers });
    } else {
      headers.set('content-type', 'application/json');
      c.res = new Response(
        JSON.stringify({ code: rpcCodeOf(status), message: full, error: message, ...(issues ? { issues } : {}) }),
        { status, headers },
      );
    }
  };
}

/** The body's bytes, inflated when `Content-Encoding: gzip`, never past `limit` either way (a bomb is a 413). */
async function bodyBytes(c: Context, limit: number): Promise<Uint8Array> {
  const raw = await readBodyBytes(c, limit);
  const encoding = (c.req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return raw;
  if (encoding !== 'gzip')
    throw new HttpError(
      415,
      `unsupported Content-Encoding ${JSON.stringify(encoding.slice(0, 32))}: expected gzip or none`,
    );
  try {
    return await inflate(raw, { maxOutputLength: limit });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
      throw new HttpError(413, `decompressed body exceeds the limit of ${limit} bytes`);
    throw new HttpError(400, 'body is not valid gzip');
  }
}

/** The ExportLogsServiceRequest of the body, in OTLP/JSON form whatever its encoding. */
function exportRequestOf(c: Context, bytes: Uint8Array): Record<string, unknown> {
  if (isProtobuf(c)) {
    const decoded = decodeExportRequest(bytes);
    if (!decoded.ok) throw new HttpError(400, decoded.error);
    return decoded.request;
  }
  const type = c.req.header('content-type');
  if (type !== undefined && !/^application\/json\b/i.test(type))
    throw new HttpError(415, `expected Content-Type ${PROTOBUF} or application/json`);
  const body = parseJsonBytes(bytes);
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new HttpError(400, 'expected an ExportLogsServiceRequest object');
  return body as Record<string, unknown>;
}

/** What the request's records became: accepted records with their events, and how many were rejected and why. */
interface Normalized {
  readonly normalized: Array<{ record: unknown; events: NormalizedEvent[] }>;
  readonly rejected: number;
  readonly errors: string[];
}

/**
 * Normalizes the whole request as one raw record. When part of it is unreadable, each LogRecord is
 * tried alone (with its resource and scope), so the readable ones are kept and the others counted
 * in `partialSuccess`, as OTLP asks of a receiver.
 */
function normalize(request: Record<string, unknown>, ingestedAt: string): Normalized {
  const whole = opentelemetryLog.normalize(request, { ingestedAt });
  if (whole.ok) return { normalized: [{ record: request, events: whole.events }], rejected: 0, errors: [] };
  const normalized: Array<{ record: unknown; events: NormalizedEvent[] }> = [];
  const errors: string[] = [];
  let rejected = 0;
  const parts = splitExportRequest(request);
  if (!parts.ok) return { normalized, rejected: 1, errors: [whole.error] };
  for (const part of parts.requests) {
    const r = opentelemetryLog.normalize(part.request, { ingestedAt });
    if (r.ok) normalized.push({ record: part.request, events: r.events });
    else {
      rejected++;
      if (errors.length < 5) errors.push(`${part.path}: ${r.error}`);
    }
  }
  return { normalized, rejected, errors };
}

const exportLogsRoute = route({
  method: 'post',
  path: OTLP_PATH,
  operationId: 'exportOtlpLogs',
  summary:
    'OTLP/HTTP logs export (an OpenTelemetry SDK or Collector `otlphttp` exporter with endpoint ' +
    '`<base>/api/v1/otlp`): protobuf or JSON, optionally gzip; answers ExportLogsServiceResponse or ' +
    "google.rpc.Status in the request's encoding",
  permission: 'ingest',
  audit: 'ingest_otlp',
  body: {
    media: {
      [PROTOBUF]: 'ExportLogsServiceRequest, binary protobuf encoding',
      'application/json': 'ExportLogsServiceRequest, OTLP/JSON encoding',
    },
  },
  middleware: (deps) => [
    otlpErrors(),
    admitIngest(deps.admission, deps.config.limits.bodyBytes, deps.config.limits.ingestBodySeconds * 1000),
  ],
  success: {
    status: 200,
    description:
      "ExportLogsServiceResponse (with partialSuccess when records were rejected), in the request's encoding",
    // OTLP/JSON writes 64-bit integers as strings.
    schema: v.strictObject({
      partialSuccess: v.optional(
        v.strictObject({ rejectedLogRecords: v.pipe(v.string(), v.regex(/^\d+$/)), errorMessage: v.string() }),
      ),
    }),
    media: { [PROTOBUF]: 'ExportLogsServiceResponse, binary protobuf encoding' },
  },
  errors: [400, 413, 415, 429],
  handle: async (c, { deps }) => {
    const limit = deps.config.limits.bodyBytes;
    const request = exportRequestOf(c, await bodyBytes(c, limit));
    const count = countLogRecords(request);
    if (count > deps.config.limits.recordsPerRequest)
      throw new HttpError(
        413,
        `export of ${count} log records exceeds the limit of ${deps.config.limits.recordsPerRequest}`,
      );
    c.get('ingestTicket').records(count);
    // An empty export (a keep-alive of some exporters) is answered, audited, and stores nothing.
    const { normalized, rejected, errors } =
      count === 0 ? { normalized: [], rejected: 0, errors: [] } : normalize(request, deps.now().toISOString());
    if (normalized.length === 0 && rejected > 0) {
      deps.metrics?.ingested.inc(
        { route: OTLP_PATH, normalizer: opentelemetryLog.name, outcome: 'rejected' },
        Math.max(rejected, count),
      );
      throw new HttpError(400, 'no log record of the export could be read', errors);
    }
    const cmd = { normalizer: opentelemetryLog.name, normalized };
    const { result } = await executeAudited(c, deps, (m) => decideIngestRaw(m, cmd), 200);
    deps.metrics?.ingested.inc(
      { route: OTLP_PATH, normalizer: opentelemetryLog.name, outcome: 'accepted' },
      result.accepted.length,
    );
    if (rejected > 0)
      deps.metrics?.ingested.inc(
        { route: OTLP_PATH, normalizer: opentelemetryLog.name, outcome: 'rejected' },
        rejected,
      );
    const answer: ExportResult = { rejectedLogRecords: rejected, errorMessage: errors.join('; ') };
    if (isProtobuf(c))
      return c.body(exportResponseProto(answer) as Uint8Array<ArrayBuffer>, 200, { 'content-type': PROTOBUF });
    return c.json(exportResponseJson(answer), 200);
  },
});

/** `POST /api/v1/otlp/v1/logs` (ingestor): the standard OTLP/HTTP logs endpoint. */
export const otlpRoutes: readonly Route[] = [exportLogsRoute];
