import { recognized, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

function escalation(activity: 'sudo' | 'su', ok: boolean): Verdict {
  return {
    category: 'identity',
    class: 'privilege_escalation',
    activity,
    outcome: ok ? 'success' : 'failure',
    severity: ok ? (activity === 'su' ? 4 : 3) : 7,
  };
}

const SUDO_KEY = /^([A-Z]{1,16})=(.*)$/s;

/**
 * Recognizes sudo's command log line `user : [reason ; ]TTY=.. ; PWD=.. ; USER=.. ; COMMAND=..`.
 * A leading reason ("3 incorrect password attempts", "user NOT in sudoers") marks a refusal.
 */
export function recognizeSudo(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  const sep = text.indexOf(' : ');
  if (sep <= 0 || sep > 256) return undefined;
  const user = text.slice(0, sep);
  if (/\s/.test(user)) return undefined;
  const rest = text.slice(sep + 3);
  // COMMAND is last and may itself contain " ; ", so everything after it is the command.
  const cmdAt = rest.startsWith('COMMAND=') ? 0 : rest.indexOf(' ; COMMAND=');
  const head = cmdAt < 0 ? rest : rest.slice(0, cmdAt);
  const fields: Record<string, string | undefined> = {};
  let reason: string | undefined;
  for (const part of head.split(' ; ', 32)) {
    const kv = SUDO_KEY.exec(part);
    if (kv) fields[kv[1]!] ??= kv[2];
    else if (reason === undefined && part !== '') reason = part;
  }
  if (cmdAt >= 0) fields['COMMAND'] = rest.slice(cmdAt === 0 ? 'COMMAND='.length : cmdAt + ' ; COMMAND='.length);
  if (fields['COMMAND'] === undefined && fields['TTY'] === undefined && fields['USER'] === undefined) return undefined;
  return recognized(
    input,
    escalation('sudo', reason === undefined),
    { ...fields, user, reason },
    { otherUsers: [fields['USER']] },
  );
}

const DEBIAN_SU = /^(FAILED SU )?\(to ([^\s)]{1,256})\) (\S{1,256}) on (\S{1,256})$/;
const SHADOW_SU = /^(Successful|FAILED) su for (\S{1,256}) by (\S{1,256})$/;
const SULOG = /^([+-]) (\S{1,256}) ([^\s:]{1,256}):(\S{1,256})$/;

function su(input: LinuxMessageInput, ok: boolean, invoker: string, target: string, tty?: string): RecognizedMessage {
  return recognized(input, escalation('su', ok), { user: invoker, USER: target, TTY: tty }, { otherUsers: [target] });
}

/** Recognizes su's own success/failure lines in the Debian, shadow-utils and sulog forms. */
export function recognizeSu(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  const d = DEBIAN_SU.exec(text);
  if (d) return su(input, d[1] === undefined, d[3]!, d[2]!, d[4]);
  const s = SHADOW_SU.exec(text);
  if (s) return su(input, s[1] === 'Successful', s[3]!, s[2]!);
  const l = SULOG.exec(text);
  if (l) return su(input, l[1] === '+', l[3]!, l[4]!, l[2]);
  return undefined;
}
