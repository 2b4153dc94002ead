import type { NormalizedEvent } from '../events/normalized-event.js';
import { answering, type NormalizeContext, type NormalizeResult, type Normalizer } from './types.js';
import { type Decoded, fail, isAbsent, isObject, ok } from './opentelemetry-log/decoded.js';
import { entityKey, shortString } from './opentelemetry-log/entity-keys.js';
import { placesOf } from './record-id.js';
import { auditEvent } from './mesh-vpn-logs/audit-log.js';
import { addFlowEvents } from './mesh-vpn-logs/flow-log.js';
import { MESH_ADAPTER, type MeshBatch } from './mesh-vpn-logs/mesh-batch.js';

const LOG_TYPES = ['network', 'configuration'] as const;
type MeshLogType = (typeof LOG_TYPES)[number];

/** Tailscale network flow logs (`logType=network`) and configuration audit logs (`logType=configuration`). */
export const meshVpnLogs: Normalizer = {
  name: MESH_ADAPTER,
  logTypes: LOG_TYPES,
  normalize: answering(normalizeRecord),
};

function normalizeRecord(record: unknown, ctx: NormalizeContext): NormalizeResult {
  const logType = LOG_TYPES.find((t) => t === ctx.logType);
  if (logType === undefined) return fail('logType', 'expected network or configuration');
  if (!isObject(record)) return fail('record', `expected a JSON object (a ${logType} log record or API response)`);
  const batch: MeshBatch = {
    placeOf: placesOf(MESH_ADAPTER, logType, record),
    // Records never name their tailnet; the `meshnet` parameter does, and links nodes to it.
    meshnetKey: entityKey('meshnet', ctx.meshnet),
    ingestedAt: ctx.ingestedAt,
  };
  const events: NormalizedEvent[] = [];
  const added = isAbsent(record.logs)
    ? addRecord(record, '', logType, batch, events, {})
    : addResponse(record, logType, batch, events);
  return added.ok ? { ok: true, events } : added;
}

/**
 * An API response: `{logs:[...]}` for network, `{version, tailnetId, logs:[...]}` for configuration.
 * Any unreadable log refuses the whole response, naming its path.
 */
function addResponse(
  response: Record<string, unknown>,
  logType: MeshLogType,
  batch: MeshBatch,
  events: NormalizedEvent[],
): Decoded<true> {
  if (!Array.isArray(response.logs)) return fail('logs', 'expected an array of log records');
  const tailnetId = shortString(response.tailnetId);
  const extra = tailnetId === undefined ? {} : { tailnetId };
  for (const [i, log] of response.logs.entries()) {
    const added = addRecord(log, `logs[${i}]`, logType, batch, events, extra);
    if (!added.ok) return added;
  }
  return ok(true);
}

function addRecord(
  record: unknown,
  where: string,
  logType: MeshLogType,
  batch: MeshBatch,
  events: NormalizedEvent[],
  extra: Record<string, unknown>,
): Decoded<true> {
  if (logType === 'network') return addFlowEvents(record, where, batch, events);
  // A lone audit event is the whole raw record, so it needs no part or path; one of a response does.
  const place = where === '' ? batch.placeOf() : batch.placeOf(events.length, where);
  const event = auditEvent(record, where, batch, place, extra);
  if (!event.ok) return event;
  events.push(event.value);
  return ok(true);
}
