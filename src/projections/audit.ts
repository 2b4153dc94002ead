import * as v from 'valibot';
import { ApiRequestAuditedSchema } from '../events/access-events.js';
import { exhaustive } from '../events/read.js';
import type { ApiRequestAudited, RequestsRefused } from '../events/record-types.js';
import { instanceIndex } from './types.js';
import type { ReadModels } from './runtime.js';

/** Database of the audit index: seq -> audit summary. */
export const AUDIT_DB = 'audit';

/** An AuditEntry as `GET /api/v1/audit` answers it (published in docs/openapi.json). */
export const AuditEntrySchema = v.strictObject({
  ...ApiRequestAuditedSchema.entries,
  seq: v.pipe(v.number(), v.integer()),
  at: v.string(),
  count: v.optional(v.number()),
  reason: v.optional(v.string()),
  firstAt: v.optional(v.string()),
  lastAt: v.optional(v.string()),
  routes: v.optional(v.array(v.string())),
});

/**
 * One audit record as served by `GET /api/v1/audit`: one request, or (with `count`) the summary of
 * `count` refused requests from one address between `firstAt` and `lastAt`.
 */
export interface AuditEntry extends ApiRequestAudited {
  readonly seq: number;
  readonly at: string;
  readonly count?: number;
  readonly reason?: string;
  readonly firstAt?: string;
  readonly lastAt?: string;
  readonly routes?: readonly string[];
}

/** The audit entry of a refusal summary. */
function summaryEntry(seq: number, at: string, s: RequestsRefused): AuditEntry {
  return {
    seq,
    at,
    requestId: `summary-${seq}`,
    principal: null,
    authentication: 'none',
    method: '*',
    route: s.routes.length === 1 ? s.routes[0]! : '*',
    status: s.status,
    durationMs: 0,
    sourceAddress: s.sourceAddress,
    count: s.count,
    reason: s.reason,
    firstAt: s.firstAt,
    lastAt: s.lastAt,
    routes: s.routes,
  };
}

/** The API audit trail, indexed by seq in LMDB (one entry per `/api/v1` request or refusal summary). */
export const auditIndex = instanceIndex({
  name: 'audit',
  version: 2,
  dbs: [AUDIT_DB],
  readDbs: [],
  recordOf: (_db, key) => key as number,
  folds: ['ApiRequestAudited', 'RequestsRefused'],
  apply(record, _read, write) {
    switch (record.type) {
      case 'ApiRequestAudited':
        write.put(AUDIT_DB, record.seq, { seq: record.seq, at: record.at, ...record.data } satisfies AuditEntry);
        return;
      case 'RequestsRefused':
        write.put(AUDIT_DB, record.seq, summaryEntry(record.seq, record.at, record.data));
        return;
      default:
        return exhaustive(record, undefined);
    }
  },
});

/** Filters of `GET /api/v1/audit`. */
export interface AuditFilter {
  readonly principal?: string;
  readonly status?: number;
  readonly route?: string;
  readonly method?: string;
  readonly since?: string;
  readonly until?: string;
  /** The fingerprint of the credential used. */
  readonly credential?: string;
}

/** Lists audit entries newest first; `before` is the seq cursor. Scans at most `scanBudget` entries. */
export function listAudit(
  models: ReadModels,
  f: AuditFilter,
  limit: number,
  before?: number,
  scanBudget = 50_000,
): { entries: AuditEntry[]; nextCursor: number | null } {
  const db = models.db<AuditEntry>(AUDIT_DB);
  const entries: AuditEntry[] = [];
  let scanned = 0;
  for (const { key, value } of db.getRange({
    start: before !== undefined ? before - 1 : Number.MAX_SAFE_INTEGER,
    end: 0,
    reverse: true,
  })) {
    const seq = key as number;
    if (++scanned > scanBudget) return { entries, nextCursor: seq + 1 };
    if (f.since !== undefined && value.at < f.since) break;
    if (f.until !== undefined && value.at > f.until) continue;
    if (
      (f.principal !== undefined && value.principal !== f.principal) ||
      (f.status !== undefined && value.status !== f.status) ||
      (f.route !== undefined && value.route !== f.route) ||
      (f.method !== undefined && value.method !== f.method) ||
      (f.credential !== undefined && value.credential !== f.credential)
    )
      continue;
    entries.push(value);
    if (entries.length >= limit) return { entries, nextCursor: seq };
  }
  return { entries, nextCursor: null };
}
