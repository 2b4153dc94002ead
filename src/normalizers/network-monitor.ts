import type { NormalizedEvent } from '../events/normalized-event.js';
import { placesOf } from './record-id.js';
import { isoFromNanos } from '../kernel/time.js';
import type { NormalizeContext, NormalizeResult, Normalizer } from './types.js';
import { mapKerberos, mapNtlm, mapRdp, mapSsh } from './network-monitor/auth.js';
import { mapConn, mapTunnel } from './network-monitor/conn.js';
import { mapDhcp, mapDns } from './network-monitor/dns.js';
import { mapNotice, mapWeird } from './network-monitor/findings.js';
import { mapGeneric } from './network-monitor/generic.js';
import { mapKnownCerts, mapKnownHosts, mapKnownServices, mapSoftware } from './network-monitor/inventory.js';
import { finalKeys, ipKey } from './network-monitor/keys.js';
import { mapFtp, mapSmtp } from './network-monitor/mail-ftp.js';
import { endpointOf } from './network-monitor/mapping.js';
import type { Fields, ZeekMapper, ZeekMapping } from './network-monitor/mapping.js';
import { compact, nanosFromZeekTime, readConn } from './network-monitor/record.js';
import type { ZeekConn, ZeekRecord } from './network-monitor/record.js';
import { mapDceRpc, mapSmbFiles, mapSmbMapping } from './network-monitor/smb.js';
import { mapFiles, mapHttp, mapSsl, mapX509 } from './network-monitor/web.js';

const ADAPTER = 'network-monitor';
/** What a Zeek log name may look like: a log path, never a file path or free text. */
const LOG_NAME = /^[A-Za-z0-9_.-]{1,100}$/;
const TS_EXPECTED = 'expected epoch seconds, ISO 8601 string or epoch milliseconds';

/** The Zeek logs with a specific mapping; any other log name gets the generic one. */
const MAPPERS: ReadonlyMap<string, ZeekMapper> = new Map<string, ZeekMapper>([
  ['conn', mapConn],
  ['dns', mapDns],
  ['http', mapHttp],
  ['ssl', mapSsl],
  ['x509', mapX509],
  ['files', mapFiles],
  ['notice', mapNotice],
  ['weird', mapWeird],
  ['ssh', mapSsh],
  ['dhcp', mapDhcp],
  ['smtp', mapSmtp],
  ['ftp', mapFtp],
  ['kerberos', mapKerberos],
  ['rdp', mapRdp],
  ['ntlm', mapNtlm],
  ['smb_files', mapSmbFiles],
  ['smb_mapping', mapSmbMapping],
  ['dce_rpc', mapDceRpc],
  ['software', mapSoftware],
  ['known_hosts', mapKnownHosts],
  ['known_services', mapKnownServices],
  ['known_certs', mapKnownCerts],
  ['tunnel', mapTunnel],
]);

/** The Zeek log names the network-monitor normalizer maps specifically. */
export const NETWORK_MONITOR_LOG_TYPES: readonly string[] = [...MAPPERS.keys()];

function refuse(error: string): NormalizeResult {
  return { ok: false, error };
}

function isObject(value: unknown): value is ZeekRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The log name of a record: `ctx.logType` (the route requires it), else the record's `_path`;
 * a `_path` that names another log means the record was sent to the wrong place.
 */
function resolveLogType(record: ZeekRecord, requested: string | undefined): { logType: string } | { error: string } {
  const path = record['_path'];
  if (path !== undefined && path !== null && typeof path !== 'string') {
    return { error: '_path: expected a string (the Zeek log name)' };
  }
  const logType = requested ?? path ?? undefined;
  if (logType === undefined) return { error: 'logType: required (the Zeek log name, e.g. conn)' };
  if (!LOG_NAME.test(logType)) return { error: 'logType: expected a Zeek log name (letters, digits, _ . -)' };
  if (typeof path === 'string' && path !== logType) {
    return { error: `_path: record is a ${JSON.stringify(path.slice(0, 100))} log but logType is "${logType}"` };
  }
  return { logType };
}

/** Turns one Zeek JSON log record into one NormalizedEvent, or says which field makes it unusable. */
export function normalizeZeekRecord(record: unknown, ctx: NormalizeContext): NormalizeResult {
  if (!isObject(record)) return refuse('record: expected a JSON object');
  const resolved = resolveLogType(record, ctx.logType);
  if ('error' in resolved) return refuse(resolved.error);
  const conn = readConn(record);
  if (typeof conn === 'string') return refuse(conn);
  if (record['ts'] === undefined || record['ts'] === null) return refuse(`ts: missing; ${TS_EXPECTED}`);
  const nanos = nanosFromZeekTime(record['ts']);
  if (nanos === undefined) return refuse(`ts: ${TS_EXPECTED}`);
  const { logType } = resolved;
  const mapper = MAPPERS.get(logType);
  const mapping = mapper === undefined ? mapGeneric(logType, record, conn) : mapper(record, conn);
  try {
    return { ok: true, events: [buildEvent(record, logType, isoFromNanos(nanos), conn, mapping, ctx.ingestedAt)] };
  } catch {
    // Hashing walks the record recursively; a pathologically nested value exhausts the stack.
    return refuse('record: too deeply nested to store');
  }
}

/** The endpoint a mapping chose, else the `id.*` side of the connection. */
function endpoint(chosen: Fields | undefined, ip: string | undefined, port: number | undefined): Fields | undefined {
  return chosen ?? endpointOf({ ip, port });
}

function endpointIp(fields: Fields | undefined): string | undefined {
  const ip = fields?.['ip'];
  return typeof ip === 'string' ? ip : undefined;
}

function buildEvent(
  record: ZeekRecord,
  logType: string,
  time: string,
  conn: ZeekConn,
  mapping: ZeekMapping,
  ingestedAt: string,
): NormalizedEvent {
  const sourceEndpoint = endpoint(mapping.sourceEndpoint, conn.origH, conn.origP);
  const destinationEndpoint = endpoint(mapping.destinationEndpoint, conn.respH, conn.respP);
  const correlation = compact({ uid: conn.uid, ...mapping.correlation });
  const entityKeys = finalKeys([
    ipKey(endpointIp(sourceEndpoint)),
    ipKey(endpointIp(destinationEndpoint)),
    ...(mapping.keys ?? []),
  ]);
  const place = placesOf(ADAPTER, logType, record)();
  return {
    schemaVersion: 1,
    id: place.id,
    category: mapping.category,
    class: mapping.class,
    activity: mapping.activity,
    outcome: mapping.outcome,
    time,
    ingestedAt,
    severity: mapping.severity,
    source: { adapter: ADAPTER, instance: logType, recordId: place.recordId },
    entityKeys,
    ...(mapping.actor && { actor: mapping.actor }),
    ...(sourceEndpoint && { sourceEndpoint }),
    ...(destinationEndpoint && { destinationEndpoint }),
    ...(mapping.service && { service: mapping.service }),
    ...(correlation && { correlation }),
    // A shallow copy: Zeek's own keys and values as sent, nothing re-encoded or duplicated.
    attributes: { ...record },
    rawReference: place.rawReference,
  };
}

/** The `network-monitor` normalizer: Zeek JSON logs, one event per record, any log name. */
export const networkMonitor: Normalizer = {
  name: ADAPTER,
  logTypes: NETWORK_MONITOR_LOG_TYPES,
  anyLogType: true,
  normalize: normalizeZeekRecord,
};
