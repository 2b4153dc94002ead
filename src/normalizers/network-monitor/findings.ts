import { fileKey, ipKey } from './keys.js';
import { endpointOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, flag, ipText, portNumber, text } from './record.js';

/**
 * Notice severity by `note`, first match wins: exact names, then `Module::` prefixes. Attack and
 * intelligence hits rank highest, scans and password guessing next, certificate and protocol
 * policy violations lower, and the sensor's own operational notices lowest.
 */
export const NOTICE_SEVERITIES: ReadonlyArray<readonly [string, number]> = [
  ['SSH::Password_Guessing', 6],
  ['ATTACK::', 7],
  ['Intel::', 7],
  ['Scan::', 6],
  ['Signatures::', 6],
  ['Heartbleed::', 6],
  ['SSH::', 4],
  ['SSL::', 4],
  ['Weird::', 3],
  ['CaptureLoss::', 2],
  ['PacketFilter::', 2],
  ['Reporter::', 2],
  ['Notice::', 2],
  ['Software::', 2],
];

/** Severity of a notice without a listed `note`. */
export const NOTICE_DEFAULT_SEVERITY = 5;
/** Severity of a weird; one Zeek also raised as a notice ranks one higher. */
export const WEIRD_SEVERITY = 3;

/** The severity of a notice from its `note` (see NOTICE_SEVERITIES). */
export function noticeSeverity(note: string | undefined): number {
  if (note === undefined) return NOTICE_DEFAULT_SEVERITY;
  for (const [pattern, severity] of NOTICE_SEVERITIES) {
    if (pattern.endsWith('::') ? note.startsWith(pattern) : note === pattern) return severity;
  }
  return NOTICE_DEFAULT_SEVERITY;
}

/**
 * notice.log: a Zeek policy finding (category `finding`, class `zeek_notice`). `src`, `dst`, `p`
 * stand in for `id.*`, which notices about hosts rather than connections lack.
 */
export const mapNotice: ZeekMapper = (record, conn) => {
  const src = ipText(record['src']),
    dst = ipText(record['dst']);
  const p = portNumber(record['p']);
  const fuid = text(record, 'fuid');
  return {
    category: 'finding',
    class: 'zeek_notice',
    activity: 'notice',
    outcome: 'unknown',
    severity: noticeSeverity(text(record, 'note')),
    sourceEndpoint: conn.origH === undefined ? endpointOf({ ip: src }) : undefined,
    destinationEndpoint: conn.respH === undefined ? endpointOf({ ip: dst, port: p }) : undefined,
    service: compact({ protocol: conn.proto, port: conn.respP ?? p }),
    correlation: compact({ fuid }),
    keys: [ipKey(src), ipKey(dst), fileKey(fuid)],
  };
};

/** weird.log: a protocol anomaly Zeek noticed (category `finding`, class `zeek_weird`). */
export const mapWeird: ZeekMapper = (record) => ({
  category: 'finding',
  class: 'zeek_weird',
  activity: 'anomaly',
  outcome: 'unknown',
  severity: flag(record, 'notice') === true ? WEIRD_SEVERITY + 1 : WEIRD_SEVERITY,
});
