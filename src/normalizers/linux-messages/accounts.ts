import { recognized, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

/** Groups whose members are root-equivalent, so joining one matters more. */
const PRIVILEGED_GROUPS = new Set(['root', 'sudo', 'wheel', 'admin', 'adm', 'docker', 'lxd', 'shadow', 'disk']);

/** shadow-utils does not log who ran it, so the account named is the object, never the actor. */
const NO_ACTOR = { actorUser: null } as const;

function account(activity: string, severity: number, ok = true): Verdict {
  return { category: 'identity', class: 'account_management', activity, outcome: ok ? 'success' : 'failure', severity };
}

/** `name=bob, UID=1001, GID=1001, home=/home/bob` as written by useradd and groupadd. */
function commaKeyValues(text: string): ReadonlyMap<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(', ', 16)) {
    const eq = part.indexOf('=');
    if (eq > 0 && !out.has(part.slice(0, eq))) out.set(part.slice(0, eq), part.slice(eq + 1));
  }
  return out;
}

function newUser(input: LinuxMessageInput, text: string): RecognizedMessage {
  const kv = commaKeyValues(text);
  // A new account with UID 0 is a second root; GID 0 puts it in root's group.
  const severity = kv.get('UID') === '0' ? 8 : kv.get('GID') === '0' ? 7 : 5;
  return recognized(
    input,
    account('user_created', severity),
    {
      user: kv.get('name'),
      uid: kv.get('UID'),
      gid: kv.get('GID'),
      home: kv.get('home'),
      shell: kv.get('shell'),
      from: kv.get('from'),
    },
    NO_ACTOR,
  );
}

function newGroup(input: LinuxMessageInput, text: string): RecognizedMessage {
  const kv = commaKeyValues(text);
  return recognized(input, account('group_created', 4), { group: kv.get('name'), gid: kv.get('GID') }, NO_ACTOR);
}

type Rule = readonly [RegExp, (m: RegExpExecArray, input: LinuxMessageInput) => RecognizedMessage];

const RULES: readonly Rule[] = [
  [
    /^add '([^']{1,256})' to (?:shadow )?group '([^']{1,256})'$/,
    (m, input) =>
      recognized(
        input,
        account('group_member_added', PRIVILEGED_GROUPS.has(m[2]!) ? 7 : 5),
        { user: m[1], group: m[2] },
        NO_ACTOR,
      ),
  ],
  [
    /^delete user '([^']{1,256})'$/,
    (m, input) => recognized(input, account('user_deleted', 5), { user: m[1] }, NO_ACTOR),
  ],
  [
    /^removed (?:shadow )?group '([^']{1,256})' owned by '([^']{1,256})'$/,
    (m, input) => recognized(input, account('group_deleted', 4), { group: m[1], owner: m[2] }, NO_ACTOR),
  ],
  [
    /^group '([^']{1,256})' removed/,
    (m, input) => recognized(input, account('group_deleted', 4), { group: m[1] }, NO_ACTOR),
  ],
  [
    /^(?:change|lock|unlock) user (?:name )?'([^']{1,256})'(.{0,512})$/,
    (m, input) => {
      const verb = m[0].split(' ', 1)[0];
      // usermod -u 0 turns an account into root.
      const severity = / UID from '\d{1,10}' to '0'$/.test(m[2]!) ? 8 : 4;
      return recognized(input, account('user_modified', severity), { user: m[1], change: `${verb}${m[2]}` }, NO_ACTOR);
    },
  ],
  [
    /^password for '([^']{1,256})' changed by '([^']{1,256})'$/,
    (m, input) =>
      recognized(input, account('password_changed', 4), { user: m[1], by_user: m[2] }, { actorUser: m[2]! }),
  ],
  [
    /^failed adding user '([^']{1,256})'/,
    (m, input) => recognized(input, account('user_created', 5, false), { user: m[1] }, NO_ACTOR),
  ],
];

/** Recognizes shadow-utils account changes (useradd, groupadd, usermod, userdel, groupdel, passwd). */
export function recognizeAccounts(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  if (text.startsWith('new user: ')) return newUser(input, text.slice('new user: '.length));
  if (text.startsWith('new group: ')) return newGroup(input, text.slice('new group: '.length));
  for (const [pattern, decide] of RULES) {
    const m = pattern.exec(text);
    if (m) return decide(m, input);
  }
  return undefined;
}
