import { addressFields, recognized, spaceKeyValues, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

const PAM_PREFIX = /^pam_unix\(([^():\s]{1,64}):([a-z_]{1,16})\): /;
const SESSION = new RegExp(
  String.raw`^session (opened|closed) for user ([^\s(]{1,256})(?:\(uid=(\d{1,10})\))?` +
    String.raw`(?: by ([^\s(]{0,256})(?:\(uid=(\d{1,10})\))?)?`,
);

/** PAM services that switch identity: their "user" is the target, the invoker is ruser / "by". */
const SWITCHERS = new Set(['sudo', 'sudo-i', 'su', 'su-l', 'runuser', 'runuser-l']);

function isSu(service: string): boolean {
  return service === 'su' || service === 'su-l' || service.startsWith('runuser');
}

function authFailure(input: LinuxMessageInput, service: string, kvText: string): RecognizedMessage {
  const kv = spaceKeyValues(kvText);
  const raw = {
    pam_service: service,
    logname: kv.get('logname'),
    uid: kv.get('uid'),
    euid: kv.get('euid'),
    tty: kv.get('tty'),
    ruser: kv.get('ruser'),
    rhost: kv.get('rhost'),
  };
  if (service.startsWith('sudo')) {
    const verdict: Verdict = {
      category: 'identity',
      class: 'privilege_escalation',
      activity: 'sudo',
      outcome: 'failure',
      severity: 7,
    };
    return recognized(input, verdict, { ...raw, user: kv.get('user') || kv.get('ruser') || kv.get('logname') });
  }
  if (isSu(service)) {
    const verdict: Verdict = {
      category: 'identity',
      class: 'privilege_escalation',
      activity: 'su',
      outcome: 'failure',
      severity: 7,
    };
    const invoker = kv.get('ruser') || kv.get('logname');
    return recognized(
      input,
      verdict,
      { ...raw, user: invoker, USER: kv.get('user') },
      { otherUsers: [kv.get('user')] },
    );
  }
  const verdict: Verdict = {
    category: 'identity',
    class: 'authentication',
    activity: 'logon',
    outcome: 'failure',
    severity: 5,
  };
  return recognized(input, verdict, { ...raw, user: kv.get('user'), ...addressFields(kv.get('rhost'), undefined) });
}

function session(input: LinuxMessageInput, service: string, m: RegExpExecArray): RecognizedMessage {
  const opened = m[1] === 'opened';
  const verdict: Verdict = {
    category: 'identity',
    class: 'authentication',
    activity: opened ? 'session_open' : 'session_close',
    outcome: 'success',
    severity: opened ? 2 : 1,
  };
  const sessionUser = m[2];
  const by = m[4];
  const base = { pam_service: service, uid: m[3], by_user: by, by_uid: m[5] };
  if (SWITCHERS.has(service) && by) {
    return recognized(input, verdict, { ...base, user: by, USER: sessionUser }, { otherUsers: [sessionUser] });
  }
  return recognized(input, verdict, { ...base, user: sessionUser }, { otherUsers: [by] });
}

function body(input: LinuxMessageInput, service: string, text: string): RecognizedMessage | undefined {
  if (text.startsWith('authentication failure; '))
    return authFailure(input, service, text.slice('authentication failure; '.length));
  if (text.startsWith('check pass; user unknown')) {
    const verdict: Verdict = {
      category: 'identity',
      class: 'authentication',
      activity: 'logon',
      outcome: 'failure',
      severity: 4,
    };
    return recognized(input, verdict, { pam_service: service });
  }
  const s = SESSION.exec(text);
  if (s) return session(input, service, s);
  const pw = /^password changed for (\S{1,256})$/.exec(text);
  if (pw) {
    const verdict: Verdict = {
      category: 'identity',
      class: 'account_management',
      activity: 'password_changed',
      outcome: 'success',
      severity: 4,
    };
    return recognized(input, verdict, { pam_service: service, user: pw[1] }, { actorUser: null });
  }
  return undefined;
}

/** Recognizes pam_unix lines (`pam_unix(<service>:<type>): ...`) from any program that uses PAM. */
export function recognizePam(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  const m = PAM_PREFIX.exec(text);
  if (!m) return undefined;
  return body(input, m[1]!, text.slice(m[0].length));
}
