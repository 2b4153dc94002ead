import type { Category } from '../../events/normalized-event.js';
import { fileKey, serviceKey } from './keys.js';
import { SEVERITY_INFO, endpointOf, outcomeOfFlag, serviceOf } from './mapping.js';
import type { ZeekMapping } from './mapping.js';
import { compact, flag, ipText, snakeWord, text } from './record.js';
import type { ZeekConn, ZeekRecord } from './record.js';

/** Zeek's reports about itself (sensor load, loss, errors, configuration of the sensor). */
const HEALTH_LOGS = new Set([
  'broker',
  'capture_loss',
  'cluster',
  'config',
  'loaded_scripts',
  'packet_filter',
  'print',
  'reporter',
  'stats',
  'telemetry',
  'telemetry_histogram',
  'weird_stats',
]);
/** Logs whose every line is a detection hit. */
const FINDING_LOGS = new Set(['intel', 'notice_alarm', 'signatures']);
/** Logs that name an analysis step rather than a protocol; the protocol is in the named field. */
const PROTOCOL_FIELDS: ReadonlyMap<string, string> = new Map([
  ['analyzer', 'analyzer_name'],
  ['dpd', 'analyzer'],
]);
/** Severity of a generic finding log line. */
const GENERIC_FINDING_SEVERITY = 5;
/** A Zeek file id: `F` and base62 characters, as files, pe and ocsp logs spell `fuid`/`id`. */
const FILE_ID = /^F[0-9A-Za-z]{5,21}$/;

/** The category of a log without a specific mapping: health, finding, discovery, else network. */
export function genericCategory(logType: string): Category {
  if (HEALTH_LOGS.has(logType)) return 'health';
  if (FINDING_LOGS.has(logType)) return 'finding';
  if (logType.startsWith('known_') || logType === 'software') return 'discovery';
  return 'network';
}

/** The class of a log without a specific mapping: `zeek_<log>` in lower_snake_case. */
export function genericClass(logType: string): string {
  return `zeek_${snakeWord(logType) || 'log'}`;
}

/** The protocol a generic log line is about: the log's own name, or a field for analyzer logs. */
function protocolOf(logType: string, record: ZeekRecord): string | undefined {
  const field = PROTOCOL_FIELDS.get(logType);
  if (field === undefined) return snakeWord(logType) || undefined;
  return text(record, field)?.toLowerCase();
}

/** The file id of a generic line: `fuid`, or an `id` that has the shape of a Zeek file id (pe, ocsp). */
function fileIdOf(record: ZeekRecord): string | undefined {
  const id = text(record, 'id');
  return text(record, 'fuid') ?? (id !== undefined && FILE_ID.test(id) ? id : undefined);
}

/**
 * The mapping of any Zeek log without a specific one: class `zeek_<log>`, activity `observe`,
 * outcome from a `success` bool when there is one; endpoints from `id.*`, else `src`/`dst`
 * (traceroute-like logs), else `host` (inventory-like logs).
 */
export function mapGeneric(logType: string, record: ZeekRecord, conn: ZeekConn): ZeekMapping {
  const category = genericCategory(logType);
  const hasTuple = conn.origH !== undefined || conn.respH !== undefined;
  const protocol = hasTuple ? protocolOf(logType, record) : undefined;
  const fuid = fileIdOf(record);
  return {
    category,
    class: genericClass(logType),
    activity: 'observe',
    outcome: outcomeOfFlag(flag(record, 'success')),
    severity: category === 'finding' ? GENERIC_FINDING_SEVERITY : SEVERITY_INFO,
    sourceEndpoint: hasTuple ? undefined : endpointOf({ ip: ipText(record['src']) }),
    destinationEndpoint: hasTuple ? undefined : endpointOf({ ip: ipText(record['dst']) ?? ipText(record['host']) }),
    service: hasTuple ? serviceOf(protocol, conn) : undefined,
    correlation: compact({ fuid }),
    keys: [fileKey(fuid), serviceKey(protocol)],
  };
}
