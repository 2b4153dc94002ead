import { addressFields, recognized, splitLast, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

const SSHD = { service: { name: 'sshd' } } as const;

function logon(outcome: 'success' | 'failure', severity: number, activity = 'logon'): Verdict {
  return { category: 'identity', class: 'authentication', activity, outcome, severity };
}

/** What follows the last ` from `: `<addr>[ port <n>][ ssh2[: key]]`. */
const FROM_TAIL = /^(\S{1,256})(?: port (\d{1,5}))?(?: |$)/;

interface Attempt {
  readonly user: string;
  readonly addr: string;
  readonly port: string | undefined;
}

/** `[invalid user ]<user> from <addr> port <n> ...`; the user name is free text, so split at the last ` from `. */
function userFromAddress(rest: string): Attempt | undefined {
  const parts = splitLast(rest, ' from ');
  if (!parts) return undefined;
  const m = FROM_TAIL.exec(parts[1]);
  if (!m) return undefined;
  const user = parts[0].startsWith('invalid user ') ? parts[0].slice('invalid user '.length) : parts[0];
  return { user, addr: m[1]!, port: m[2] };
}

/** `<user> <addr> port <n>[ [preauth]]`, the form of the "Connection closed" / "Disconnected" lines. */
function userAddressPort(rest: string): Attempt | undefined {
  const body = rest.endsWith(' [preauth]') ? rest.slice(0, -' [preauth]'.length) : rest;
  const byPort = splitLast(body, ' port ');
  if (!byPort || !/^\d{1,5}$/.test(byPort[1])) return undefined;
  const byAddr = splitLast(byPort[0], ' ');
  if (!byAddr || byAddr[1] === '') return undefined;
  return { user: byAddr[0], addr: byAddr[1], port: byPort[1] };
}

function build(
  input: LinuxMessageInput,
  verdict: Verdict,
  a: Attempt | undefined,
  extra: Record<string, string | undefined> = {},
): RecognizedMessage | undefined {
  if (!a) return undefined;
  return recognized(input, verdict, { user: a.user, ...addressFields(a.addr, a.port), ...extra }, SSHD);
}

const PREFIXED: readonly (readonly [
  RegExp,
  (m: RegExpExecArray, rest: string, input: LinuxMessageInput) => RecognizedMessage | undefined,
])[] = [
  [
    /^Failed (\S{1,64}) for /,
    (m, rest, input) => build(input, logon('failure', 5), userFromAddress(rest), { auth_method: m[1] }),
  ],
  [
    /^Accepted (\S{1,64}) for /,
    (m, rest, input) => build(input, logon('success', 3), userFromAddress(rest), { auth_method: m[1] }),
  ],
  [/^Invalid user /, (_m, rest, input) => build(input, logon('failure', 6), userFromAddress(rest))],
  [
    /^maximum authentication attempts exceeded for /,
    (_m, rest, input) => build(input, logon('failure', 6), userFromAddress(rest)),
  ],
  [
    /^(?:Connection closed by|Disconnected from) (?:authenticating|invalid) user /,
    (_m, rest, input) => build(input, logon('failure', 4), userAddressPort(rest)),
  ],
  [/^Disconnected from user /, (_m, rest, input) => build(input, logon('success', 1, 'logoff'), userAddressPort(rest))],
];

/** Recognizes OpenSSH server lines (from `sshd`, or `sshd-session` since OpenSSH 9.8). */
export function recognizeSshd(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  // sshd prefixes some lines with its log level ("error: maximum authentication attempts exceeded ...").
  const body = text.startsWith('error: ') ? text.slice('error: '.length) : text;
  for (const [pattern, decide] of PREFIXED) {
    const m = pattern.exec(body);
    if (m) return decide(m, body.slice(m[0].length), input);
  }
  return undefined;
}
