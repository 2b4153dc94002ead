import type { Outcome } from '../../events/normalized-event.js';
import { certKey, domainKey, fileKey, ipKey, serviceKey, userKey } from './keys.js';
import type { MaybeKey } from './keys.js';
import { SEVERITY_INFO, outcomeOfFlag, outcomeOfReplyCode, serviceOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, flag, ipText, nonEmpty, num, text, texts } from './record.js';
import type { ZeekRecord } from './record.js';

/** The host name of an HTTP Host header: without `:port`, IPv6 brackets removed. */
export function hostHeaderName(host: string): string {
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(host);
  if (bracketed) return bracketed[1]!;
  if (ipText(host) !== undefined) return host;
  return host.replace(/:\d+$/, '');
}

/** http.log: one event per request/response pair (class `http_request`, activity `request`). */
export const mapHttp: ZeekMapper = (record, conn) => {
  const host = text(record, 'host');
  const user = text(record, 'username');
  const fuids = [...texts(record, 'orig_fuids'), ...texts(record, 'resp_fuids')];
  return {
    category: 'network',
    class: 'http_request',
    activity: 'request',
    outcome: outcomeOfReplyCode(num(record, 'status_code')),
    severity: SEVERITY_INFO,
    actor: compact({ user }),
    service: serviceOf('http', conn),
    correlation: compact({ fuids: nonEmpty(fuids) }),
    keys: [domainKey(host === undefined ? undefined : hostHeaderName(host)), userKey(user), ...fuids.map(fileKey)],
  };
};

/** ssl.log: one event per TLS/SSL session (class `tls_session`, activity `handshake`). */
export const mapSsl: ZeekMapper = (record, conn) => {
  const fuids = [...texts(record, 'cert_chain_fuids'), ...texts(record, 'client_cert_chain_fuids')];
  const fps = [...texts(record, 'cert_chain_fps'), ...texts(record, 'client_cert_chain_fps')];
  return {
    category: 'network',
    class: 'tls_session',
    activity: 'handshake',
    outcome: outcomeOfFlag(flag(record, 'established')),
    severity: SEVERITY_INFO,
    service: serviceOf('ssl', conn),
    correlation: compact({ fuids: nonEmpty(fuids) }),
    keys: [domainKey(text(record, 'server_name')), ...fps.map(certKey), ...fuids.map(certKey)],
  };
};

/** x509.log: one event per certificate seen (class `x509_certificate`, activity `certificate_seen`). */
export const mapX509: ZeekMapper = (record) => {
  const fileId = text(record, 'id');
  const sanNames = texts(record, 'san.dns').filter((name) => !name.includes('*'));
  return {
    category: 'network',
    class: 'x509_certificate',
    activity: 'certificate_seen',
    outcome: 'unknown',
    severity: SEVERITY_INFO,
    correlation: compact({ fuid: fileId }),
    keys: [
      certKey(text(record, 'fingerprint')),
      certKey(fileId),
      certKey(text(record, 'certificate.serial')),
      fileKey(fileId),
      ...sanNames.map(domainKey),
      ...texts(record, 'san.ip').map(ipKey),
    ],
  };
};

/**
 * A file's outcome: success when Zeek saw every byte of a file of known size, otherwise unknown,
 * because missing bytes or an analysis timeout describe the monitor's view, not the transfer.
 */
function fileOutcome(record: ZeekRecord): Outcome {
  const seen = num(record, 'seen_bytes'),
    total = num(record, 'total_bytes');
  const missing = num(record, 'missing_bytes') ?? 0;
  if (seen === undefined || total === undefined) return 'unknown';
  return seen >= total && missing === 0 && flag(record, 'timedout') !== true ? 'success' : 'unknown';
}

/** files.log: one event per file seen on the wire (class `file_transfer`, activity `transfer`). */
export const mapFiles: ZeekMapper = (record, conn) => {
  const fuid = text(record, 'fuid');
  const protocol = text(record, 'source')?.toLowerCase();
  const legacyHosts: MaybeKey[] = [...texts(record, 'tx_hosts'), ...texts(record, 'rx_hosts')].map(ipKey);
  return {
    category: 'data',
    class: 'file_transfer',
    activity: 'transfer',
    outcome: fileOutcome(record),
    severity: SEVERITY_INFO,
    service: serviceOf(protocol, conn),
    correlation: compact({
      fuid,
      parentFuid: text(record, 'parent_fuid'),
      uids: nonEmpty(texts(record, 'conn_uids')),
    }),
    keys: [fileKey(fuid), serviceKey(protocol), ...legacyHosts],
  };
};
