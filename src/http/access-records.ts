import type { Principal } from '../auth/registry.js';
import type { DomainEvent } from '../commands/decision.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import {
  RecordType,
  type AccessRecorded,
  type ApiRequestAudited,
  type RequestsRefused,
} from '../events/record-types.js';
import type { RefusalCount } from './refusals.js';

/** What one `/api/v1` request did, as the guard saw it. */
export interface RequestFacts {
  readonly requestId: string;
  readonly operation: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  readonly sourceAddress: string;
  readonly approved: boolean;
  readonly principal?: Principal;
  readonly at: string;
  /** What a hunt asked and answered, for its audit record. */
  readonly search?: ApiRequestAudited['search'];
}

/**
 * The two records of one request (spec 6): a normalized access event (category identity, class
 * `api_access`, activity = the operation, outcome from the status) and the API audit record.
 */
export function accessRecords(f: RequestFacts): DomainEvent[] {
  const p = f.principal;
  const event: NormalizedEvent = {
    schemaVersion: 1,
    id: `vigil:api:${f.requestId}`,
    category: 'identity',
    class: 'api_access',
    activity: f.operation,
    outcome: f.status < 400 ? 'success' : 'failure',
    time: f.at,
    ingestedAt: f.at,
    severity: f.status === 401 || f.status === 403 ? 4 : !f.approved ? 3 : 1,
    source: { adapter: 'vigil', instance: 'api', recordId: f.requestId },
    entityKeys: [
      ...(p ? [`user:${p.id}`] : []),
      ...(f.sourceAddress !== 'unknown' ? [`ip:${f.sourceAddress}`] : []),
      'service:vigil-api',
    ],
    actor: p ? { user: p.id, authentication: p.authentication, roles: [...p.roles] } : null,
    sourceEndpoint: { ip: f.sourceAddress },
    service: { name: 'vigil-api' },
    attributes: {
      method: f.method,
      route: f.route,
      status: f.status,
      source_ip: f.sourceAddress,
      unapproved_device: !f.approved,
      principal: p?.id ?? null,
      authentication: p?.authentication ?? 'none',
      ...(p?.credential !== undefined ? { credential: p.credential } : {}),
      request_id: f.requestId,
    },
  };
  const audit: ApiRequestAudited = {
    requestId: f.requestId,
    principal: p?.id ?? null,
    authentication: p?.authentication ?? 'none',
    method: f.method,
    route: f.route,
    status: f.status,
    durationMs: f.durationMs,
    sourceAddress: f.sourceAddress,
    ...(p?.credential !== undefined ? { credential: p.credential } : {}),
    ...(f.search ? { search: f.search } : {}),
  };
  return [
    { type: RecordType.AccessRecorded, data: { event } satisfies AccessRecorded },
    { type: RecordType.ApiRequestAudited, data: audit },
  ];
}

/**
 * The summary record of counted refusals (one per reason, address and interval), with a
 * detectable access event. None for a lone failed authentication: that one is logged in full.
 */
export function refusalRecords(counts: readonly RefusalCount[]): DomainEvent[] {
  const out: DomainEvent[] = [];
  for (const c of counts) {
    if (c.reason === 'authentication_failed' && c.count === 1) continue;
    const known = c.sourceAddress !== '*' && c.sourceAddress !== 'unknown';
    const event: NormalizedEvent = {
      schemaVersion: 1,
      id: `vigil:refused:${c.reason}:${c.sourceAddress}:${c.firstAt}`,
      category: 'identity',
      class: 'api_access',
      activity: 'requests_refused',
      outcome: 'failure',
      time: c.lastAt,
      ingestedAt: c.lastAt,
      severity: c.reason === 'overloaded' || c.reason === 'disk_full' ? 2 : 4,
      source: { adapter: 'vigil', instance: 'api', recordId: `refused:${c.reason}:${c.sourceAddress}:${c.firstAt}` },
      entityKeys: [...(known ? [`ip:${c.sourceAddress}`] : []), 'service:vigil-api'],
      actor: null,
      sourceEndpoint: { ip: c.sourceAddress },
      service: { name: 'vigil-api' },
      attributes: {
        reason: c.reason,
        refused_status: c.status,
        count: c.count,
        first_at: c.firstAt,
        last_at: c.lastAt,
        routes: [...c.routes],
        source_ip: c.sourceAddress,
        authentication: 'none',
      },
    };
    const data: RequestsRefused = {
      event,
      reason: c.reason,
      status: c.status,
      sourceAddress: c.sourceAddress,
      count: c.count,
      firstAt: c.firstAt,
      lastAt: c.lastAt,
      routes: [...c.routes],
    };
    out.push({ type: RecordType.RequestsRefused, data });
  }
  return out;
}
