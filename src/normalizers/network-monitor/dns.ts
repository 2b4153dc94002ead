import type { Outcome } from '../../events/normalized-event.js';
import { domainKey, hostKey, ipKey } from './keys.js';
import type { MaybeKey } from './keys.js';
import { SEVERITY_INFO, endpointOf, serviceOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, ipText, nonEmpty, num, text, texts } from './record.js';
import type { ZeekRecord } from './record.js';

/**
 * The outcome of a DNS transaction: NOERROR (even with no answers, which is a valid "no data"
 * reply) is success, any other response code (NXDOMAIN, SERVFAIL, REFUSED, FORMERR...) is a
 * failure, and an unanswered query (no `rcode`) is unknown.
 */
export function dnsOutcome(record: ZeekRecord): Outcome {
  const name = text(record, 'rcode_name');
  if (name !== undefined) return name.toUpperCase() === 'NOERROR' ? 'success' : 'failure';
  const code = num(record, 'rcode');
  if (code === undefined) return 'unknown';
  return code === 0 ? 'success' : 'failure';
}

/** dns.log: one event per query/response pair (class `dns_query`, activity `query`). */
export const mapDns: ZeekMapper = (record, conn) => ({
  category: 'network',
  class: 'dns_query',
  activity: 'query',
  outcome: dnsOutcome(record),
  severity: SEVERITY_INFO,
  service: serviceOf('dns', conn),
  keys: [domainKey(text(record, 'query')), ...texts(record, 'answers').map(answerKey)],
});

/** An answer is an address (A/AAAA) or a name (CNAME, PTR, MX...); TXT-like text gives no key. */
function answerKey(answer: string): MaybeKey {
  if (ipText(answer) !== undefined) return ipKey(answer);
  return /^[A-Za-z0-9_.-]+$/.test(answer) ? domainKey(answer) : undefined;
}

/** The outcome of a DHCP transaction from its message types: ACK success, NAK failure. */
function dhcpOutcome(types: string[]): Outcome {
  const upper = types.map((t) => t.toUpperCase());
  if (upper.includes('ACK')) return 'success';
  if (upper.includes('NAK')) return 'failure';
  return 'unknown';
}

/** dhcp.log: one event per DHCP transaction (class `dhcp_lease`, activity `lease`). */
export const mapDhcp: ZeekMapper = (record, conn) => {
  const hostName = text(record, 'host_name');
  const assigned = ipText(record['assigned_addr']);
  return {
    category: 'network',
    class: 'dhcp_lease',
    activity: 'lease',
    outcome: dhcpOutcome(texts(record, 'msg_types')),
    severity: SEVERITY_INFO,
    sourceEndpoint: endpointOf({
      ip: ipText(record['client_addr']) ?? assigned,
      mac: text(record, 'mac'),
      host: hostName,
    }),
    destinationEndpoint: endpointOf({ ip: ipText(record['server_addr']) }),
    service: serviceOf('dhcp', conn),
    correlation: compact({ uids: nonEmpty(texts(record, 'uids')) }),
    keys: [hostKey(hostName), domainKey(text(record, 'client_fqdn')), ipKey(assigned)],
  };
};
