/**
 * The Linux message recognizer shared by the syslog-rfc5424 and linux-journal normalizers: it reads
 * the free text of sshd, PAM, sudo, su, shadow-utils, systemd, logind and kernel lines and says what
 * happened, in the vocabulary of docs/normalizers/linux-messages.md.
 */
import { recognizeAccounts } from './linux-messages/accounts.js';
import { recognizeKernel } from './linux-messages/kernel.js';
import { recognizePam } from './linux-messages/pam.js';
import { recognizeSshd } from './linux-messages/sshd.js';
import { recognizeSu, recognizeSudo } from './linux-messages/sudo-su.js';
import { recognizeLogind, recognizeSystemd } from './linux-messages/systemd.js';
import type { LinuxMessageInput, Matcher, RecognizedMessage } from './linux-messages/types.js';

export type { LinuxMessageInput, RecognizedMessage } from './linux-messages/types.js';

/** Only the head of a message is read: every recognized form is short, and input may be hostile. */
const MAX_TEXT = 8192;

const SSHD: readonly Matcher[] = [recognizeSshd, recognizePam];
const ACCOUNTS: readonly Matcher[] = [recognizeAccounts, recognizePam];
const ACCOUNT_PROGRAMS = [
  'useradd',
  'groupadd',
  'usermod',
  'groupmod',
  'userdel',
  'groupdel',
  'passwd',
  'chpasswd',
  'gpasswd',
  'chage',
];

const BY_PROGRAM: ReadonlyMap<string, readonly Matcher[]> = new Map<string, readonly Matcher[]>([
  // OpenSSH >= 9.8 logs per-connection lines from sshd-session (and sshd-auth since 10.0).
  ['sshd', SSHD],
  ['sshd-session', SSHD],
  ['sshd-auth', SSHD],
  ['sudo', [recognizeSudo, recognizePam]],
  ['su', [recognizeSu, recognizePam]],
  ...ACCOUNT_PROGRAMS.map((p) => [p, ACCOUNTS] as const),
  ['systemd', [recognizeSystemd]],
  ['systemd-logind', [recognizeLogind]],
  ['kernel', [recognizeKernel]],
]);

/** With no program name every family is tried; a known program other than these only gets PAM. */
const EVERY: readonly Matcher[] = [
  recognizeSshd,
  recognizePam,
  recognizeSudo,
  recognizeSu,
  recognizeAccounts,
  recognizeSystemd,
  recognizeLogind,
  recognizeKernel,
];
const OTHER: readonly Matcher[] = [recognizePam];

/** The program's canonical name: `sshd[4242]` and `/usr/sbin/sshd` both become `sshd`. */
export function programName(program: string | undefined): string | undefined {
  if (program === undefined) return undefined;
  let name = program.length > 256 ? program.slice(0, 256) : program;
  const bracket = name.indexOf('[');
  if (bracket > 0 && name.endsWith(']')) name = name.slice(0, bracket);
  name = name.slice(name.lastIndexOf('/') + 1).toLowerCase();
  return name === '' || name === '-' ? undefined : name;
}

/** Says what a Linux log line means, or undefined when it is not one of the documented forms. */
export function recognizeLinuxMessage(input: LinuxMessageInput): RecognizedMessage | undefined {
  if (typeof input.message !== 'string') return undefined;
  const text = input.message.slice(0, MAX_TEXT).trim();
  if (text === '') return undefined;
  const name = programName(input.program);
  const matchers = name === undefined ? EVERY : (BY_PROGRAM.get(name) ?? OTHER);
  for (const match of matchers) {
    const found = match(text, input);
    if (found) return found;
  }
  return undefined;
}
