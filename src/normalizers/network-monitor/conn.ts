import type { Outcome } from '../../events/normalized-event.js';
import { portKey, serviceKey } from './keys.js';
import { SEVERITY_INFO, serviceOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, enumName, nonEmpty, snakeWord, text, texts } from './record.js';

/**
 * Outcome of each Zeek `conn_state` (see docs/normalizers/network-monitor.md for the reasoning):
 * success once the connection was established, failure when the responder never completed a
 * handshake, unknown when the monitor saw too little to tell. `OTH` is decided by `history`.
 */
export const CONN_STATE_OUTCOMES: Readonly<Record<string, Outcome>> = {
  S0: 'failure',
  S1: 'success',
  SF: 'success',
  REJ: 'failure',
  S2: 'success',
  S3: 'success',
  RSTO: 'success',
  RSTR: 'success',
  RSTOS0: 'failure',
  RSTRH: 'failure',
  SH: 'failure',
  SHR: 'unknown',
  OTH: 'unknown',
};

/**
 * The outcome of a conn record: the `conn_state` table, except that midstream traffic (`OTH`)
 * whose `history` shows payload or acks from both sides was evidently a working connection.
 */
export function connOutcome(state: string | undefined, history: string | undefined): Outcome {
  if (state === undefined || !Object.hasOwn(CONN_STATE_OUTCOMES, state)) return 'unknown';
  if (state === 'OTH' && history !== undefined && bothSidesTalked(history)) return 'success';
  return CONN_STATE_OUTCOMES[state] ?? 'unknown';
}

/** Upper-case history letters are the originator's, lower-case the responder's. */
function bothSidesTalked(history: string): boolean {
  return /[DA]/.test(history) && /[da]/.test(history);
}

/** conn.log: one event per connection (class `network_connection`, activity `traffic`). */
export const mapConn: ZeekMapper = (record, conn) => {
  const service = text(record, 'service');
  const names = service === undefined ? [] : service.split(',');
  return {
    category: 'network',
    class: 'network_connection',
    activity: 'traffic',
    outcome: connOutcome(text(record, 'conn_state'), text(record, 'history')),
    severity: SEVERITY_INFO,
    service: serviceOf(service?.toLowerCase(), conn),
    correlation: compact({
      communityId: text(record, 'community_id'),
      tunnelParents: nonEmpty(texts(record, 'tunnel_parents')),
    }),
    keys: [...names.map(serviceKey), portKey(conn.proto, conn.respP)],
  };
};

/** tunnel.log: a tunnel discovered, closed or expired (activity from `action`). */
export const mapTunnel: ZeekMapper = (record, conn) => {
  const action = text(record, 'action');
  const type = text(record, 'tunnel_type');
  const name = type === undefined ? undefined : snakeWord(enumName(type)) || undefined;
  return {
    category: 'network',
    class: 'network_tunnel',
    activity: (action === undefined ? '' : snakeWord(enumName(action))) || 'tunnel',
    outcome: 'unknown',
    severity: SEVERITY_INFO,
    service: serviceOf(name, conn),
    keys: [serviceKey(name)],
  };
};
