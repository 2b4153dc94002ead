import { fileKey, userKey } from './keys.js';
import { SEVERITY_INFO, authSeverity, outcomeOfReplyCode, serviceOf } from './mapping.js';
import type { ZeekMapper } from './mapping.js';
import { compact, nonEmpty, num, text, texts } from './record.js';

/** The 3-digit code that starts an SMTP reply line (`250 OK id=...` -> 250), else undefined. */
export function replyCodeOf(reply: string | undefined): number | undefined {
  const match = reply === undefined ? null : /^([1-5]\d\d)(?:[ -]|$)/.exec(reply);
  return match ? Number(match[1]) : undefined;
}

/** smtp.log: one event per SMTP transaction; the outcome is the last reply's code class. */
export const mapSmtp: ZeekMapper = (record, conn) => {
  const fuids = texts(record, 'fuids');
  return {
    category: 'network',
    class: 'smtp_transaction',
    activity: 'send_mail',
    outcome: outcomeOfReplyCode(replyCodeOf(text(record, 'last_reply'))),
    severity: SEVERITY_INFO,
    service: serviceOf('smtp', conn),
    correlation: compact({ fuids: nonEmpty(fuids) }),
    keys: fuids.map(fileKey),
  };
};

/** FTP commands whose failure is a failed login. */
const LOGIN_COMMANDS = new Set(['USER', 'PASS', 'ACCT']);

/** ftp.log: one event per FTP command and its reply (class `ftp_command`, activity `command`). */
export const mapFtp: ZeekMapper = (record, conn) => {
  const user = text(record, 'user');
  const fuid = text(record, 'fuid');
  const outcome = outcomeOfReplyCode(num(record, 'reply_code'));
  const command = text(record, 'command')?.toUpperCase();
  return {
    category: 'network',
    class: 'ftp_command',
    activity: 'command',
    outcome,
    severity: command !== undefined && LOGIN_COMMANDS.has(command) ? authSeverity(outcome) : SEVERITY_INFO,
    actor: compact({ user }),
    service: serviceOf('ftp', conn),
    correlation: compact({ fuid }),
    keys: [userKey(user), fileKey(fuid)],
  };
};
