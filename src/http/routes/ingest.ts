import type { Hono } from 'hono';
import * as v from 'valibot';
import { decideIngestRaw } from '../../commands/ingest-raw.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { NORMALIZERS, logTypeProblem } from '../../normalizers/registry.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from '../../normalizers/types.js';
import { batchOf } from '../batch.js';
import { readJsonBody } from '../body.js';
import type { AppDeps, AppEnv, NetPolicy } from '../env.js';
import { HttpError, parseOr400 } from '../errors.js';
import { guard } from '../guard.js';
import { executeAudited, withDetections } from '../request-context.js';
import { admitIngest } from '../admission.js';

/** Query of `POST /api/v1/ingest/{normalizer}`. */
export const IngestQuery = v.strictObject({
  logType: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(64))),
  meshnet: v.optional(v.pipe(v.string(), v.minLength(1), v.maxLength(253), v.regex(/^[\w.@-]+$/, 'expected a tailnet name'))),
});

/** Runs a normalizer over every record; one 400 names every refused record by index. */
function normalizeAll(normalizer: Normalizer, ctx: NormalizeContext, records: readonly unknown[]): Array<{ record: unknown; events: NormalizedEvent[] }> {
  const out: Array<{ record: unknown; events: NormalizedEvent[] }> = [];
  const issues: string[] = [];
  for (let i = 0; i < records.length; i++) {
    let r: NormalizeResult;
    try {
      r = normalizer.normalize(records[i], ctx);
    } catch {
      // A normalizer must not throw; if one does, the record is refused rather than the server failing.
      r = { ok: false, error: 'record could not be normalized' };
    }
    if (r.ok) out.push({ record: records[i], events: r.events });
    else if (issues.length < 200) issues.push(`records[${i}]: ${r.error}`);
  }
  if (issues.length > 0) throw new HttpError(400, 'invalid records: the batch was not accepted', issues);
  return out;
}

/** `POST /api/v1/ingest/{normalizer}` (ingestor): raw records through a built-in normalizer. */
export function ingestRoutes(app: Hono<AppEnv>, deps: AppDeps, net: NetPolicy): void {
  app.post('/api/v1/ingest/:normalizer', guard(deps, net, '/api/v1/ingest/{normalizer}', 'ingest_raw', 'ingest'), admitIngest(deps.admission, deps.config.limits.bodyBytes), async (c) => {
    const name = c.req.param('normalizer');
    const normalizer = NORMALIZERS.get(name);
    if (!normalizer) throw new HttpError(400, 'unknown normalizer', [`normalizer: ${JSON.stringify(name.slice(0, 64))} is not one of ${[...NORMALIZERS.keys()].join(', ')}`]);
    const q = parseOr400(IngestQuery, c.req.query(), 'query');
    const problem = logTypeProblem(normalizer, q.logType);
    if (problem) throw new HttpError(400, 'invalid query', [problem]);
    if (q.meshnet !== undefined && name !== 'mesh-vpn-logs') throw new HttpError(400, 'invalid query', [`meshnet: only mesh-vpn-logs takes a meshnet`]);
    const batch = batchOf(await readJsonBody(c, deps.config.limits.bodyBytes), deps.config.limits.recordsPerRequest);
    c.get('ingestTicket').records(batch.records.length);
    const ctx: NormalizeContext = {
      ingestedAt: deps.now().toISOString(),
      ...(q.logType !== undefined ? { logType: q.logType } : {}),
      ...(q.meshnet !== undefined ? { meshnet: q.meshnet } : {}),
      ...(batch.context !== undefined ? { context: batch.context } : {}),
    };
    const normalized = normalizeAll(normalizer, ctx, batch.records);
    const cmd = { normalizer: name, normalized, ...(q.logType !== undefined ? { logType: q.logType } : {}), ...(q.meshnet !== undefined ? { meshnet: q.meshnet } : {}) };
    return c.json(withDetections(await executeAudited(c, deps, (m) => decideIngestRaw(m, cmd), 202)), 202);
  });
}
