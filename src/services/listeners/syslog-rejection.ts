import { isIP } from 'node:net';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { placesOf } from '../../normalizers/record-id.js';

/** Why a listener could not take a message as RFC 5424. */
export type SyslogRejectionReason = 'not_rfc5424' | 'too_large';

/** The raw record a listener keeps for each message it received (accepted or rejected). */
export interface ListenerRecord {
  readonly message: string;
  readonly receivedAt: string;
  readonly peer: string;
  readonly listener: string;
  readonly transport: 'tcp' | 'tls' | 'udp';
  /** The frame's length in bytes when only its head was kept (an oversized frame). */
  readonly length?: number;
}

/**
 * The NormalizedEvent of a message a syslog listener could not accept (source `vigil/syslog`), so
 * it is kept, counted and detectable (`logsource: {product: vigil, service: syslog}`) instead of
 * dropped. Pure: everything comes from the record.
 */
export function syslogRejectionEvent(
  record: ListenerRecord,
  reason: SyslogRejectionReason,
  error: string,
  ingestedAt: string,
): NormalizedEvent {
  const place = placesOf('vigil', 'syslog', record)();
  const ip = isIP(record.peer) !== 0 ? record.peer : undefined;
  return {
    schemaVersion: 1,
    id: place.id,
    category: 'finding',
    class: 'syslog_message_rejected',
    activity: reason,
    outcome: 'failure',
    time: record.receivedAt,
    ingestedAt,
    severity: 2,
    source: { adapter: 'vigil', instance: 'syslog', recordId: place.recordId },
    entityKeys: ip ? [`ip:${ip}`] : [],
    actor: null,
    sourceEndpoint: ip ? { ip } : null,
    service: { name: 'vigil-syslog' },
    attributes: {
      reason,
      error: error.slice(0, 512),
      listener: record.listener,
      transport: record.transport,
      peer: record.peer,
      message: record.message.slice(0, 512),
      length: record.length ?? Buffer.byteLength(record.message),
    },
    rawReference: place.rawReference,
  };
}
