import type { Outcome } from '../../events/normalized-event.js';
import { hostKey, userKey } from './keys.js';
import { SEVERITY_INFO, authSeverity, outcomeOfFlag, serviceOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, flag, num, snakeWord, text } from './record.js';

/**
 * ssh.log: one event per SSH session (category `identity`, class `ssh_session`). `auth_success`
 * true/false/absent gives success/failure/unknown; a session with no authentication attempt
 * (`auth_attempts: 0`, no `auth_success`) is a `connect`, otherwise an `authenticate`.
 */
export const mapSsh: ZeekMapper = (record, conn) => {
  const success = flag(record, 'auth_success');
  const attempts = num(record, 'auth_attempts') ?? 0;
  const outcome = outcomeOfFlag(success);
  return {
    category: 'identity',
    class: 'ssh_session',
    activity: success !== undefined || attempts > 0 ? 'authenticate' : 'connect',
    outcome,
    severity: authSeverity(outcome),
    service: serviceOf('ssh', conn),
  };
};

/** A Kerberos principal as Zeek logs it (`name/REALM`): the name and the realm after the last `/`. */
export function splitPrincipal(principal: string): { user?: string; realm?: string } {
  const at = principal.lastIndexOf('/');
  if (at < 0) return { user: principal };
  return compact({ user: principal.slice(0, at) || undefined, realm: principal.slice(at + 1) || undefined }) ?? {};
}

/** Kerberos success from `success`, or failure when only an `error_msg` was logged. */
function kerberosOutcome(success: boolean | undefined, error: string | undefined): Outcome {
  if (success !== undefined) return outcomeOfFlag(success);
  return error !== undefined ? 'failure' : 'unknown';
}

/** kerberos.log: one event per AS/TGS exchange (class `kerberos_request`, activity `as_request`...). */
export const mapKerberos: ZeekMapper = (record, conn) => {
  const client = text(record, 'client');
  const { user, realm } = client === undefined ? {} : splitPrincipal(client);
  const type = text(record, 'request_type');
  const outcome = kerberosOutcome(flag(record, 'success'), text(record, 'error_msg'));
  return {
    category: 'identity',
    class: 'kerberos_request',
    activity: type === undefined ? 'request' : `${snakeWord(type) || 'unknown'}_request`,
    outcome,
    severity: authSeverity(outcome),
    actor: compact({ user, domain: realm }),
    service: serviceOf('kerberos', conn),
    keys: [userKey(user)],
  };
};

/** NTLM success from `success` (Zeek 3+), or from the older `status` text (`SUCCESS`). */
function ntlmOutcome(success: boolean | undefined, status: string | undefined): Outcome {
  if (success !== undefined) return outcomeOfFlag(success);
  if (status === undefined) return 'unknown';
  return status.toUpperCase() === 'SUCCESS' ? 'success' : 'failure';
}

/** ntlm.log: one event per NTLM authentication (category `identity`, activity `authenticate`). */
export const mapNtlm: ZeekMapper = (record, conn) => {
  const user = text(record, 'username');
  const host = text(record, 'hostname');
  const outcome = ntlmOutcome(flag(record, 'success'), text(record, 'status'));
  return {
    category: 'identity',
    class: 'ntlm_authentication',
    activity: 'authenticate',
    outcome,
    severity: authSeverity(outcome),
    actor: compact({ user, host, domain: text(record, 'domainname') }),
    service: serviceOf('ntlm', conn),
    keys: [userKey(user), hostKey(host), hostKey(text(record, 'server_dns_computer_name'))],
  };
};

/**
 * An RDP `result`: `Success` is success, `encrypted` (the exchange went encrypted before a result
 * was visible) is unknown, and any other server verdict (`User rejected`...) is a failure.
 */
function rdpOutcome(result: string | undefined): Outcome {
  if (result === undefined) return 'unknown';
  const lower = result.toLowerCase();
  if (lower === 'success') return 'success';
  return lower === 'encrypted' ? 'unknown' : 'failure';
}

/** rdp.log: one event per RDP connection; the `cookie` (mstshash) is the client's user name. */
export const mapRdp: ZeekMapper = (record, conn) => {
  const cookie = text(record, 'cookie');
  return {
    category: 'network',
    class: 'rdp_session',
    activity: 'connect',
    outcome: rdpOutcome(text(record, 'result')),
    severity: SEVERITY_INFO,
    actor: compact({ user: cookie }),
    service: serviceOf('rdp', conn),
    keys: [userKey(cookie)],
  };
};
