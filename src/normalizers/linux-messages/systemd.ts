import { recognized, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

const UNIT_TYPES = 'service|socket|timer|mount|automount|target|scope|slice|path|swap|device';
/** `nginx.service - A high performance web server.` (systemd >= 247) or just the description (older). */
const UNIT_AND_DESCRIPTION = new RegExp(`^([\\w@:.\\\\-]{1,256}\\.(?:${UNIT_TYPES}))(?: - (.{0,1024}))?$`);
const UNIT_RESULT = /^(\S{1,256}): Failed with result '([^']{1,64})'\.?$/;

function unitVerdict(activity: string, ok: boolean, severity: number): Verdict {
  return { category: 'system', class: 'service', activity, outcome: ok ? 'success' : 'failure', severity };
}

function unitEvent(
  input: LinuxMessageInput,
  verdict: Verdict,
  subject: string,
  extra: Record<string, string> = {},
): RecognizedMessage {
  const text = subject.endsWith('.') ? subject.slice(0, -1) : subject;
  const m = UNIT_AND_DESCRIPTION.exec(text);
  const unit = m?.[1];
  const description = m ? m[2] : text;
  const service = unit !== undefined ? { name: unit } : { description };
  return recognized(input, verdict, { ...extra, unit, description }, { service });
}

/** Recognizes systemd (PID 1) job results: unit started, stopped, failed to start, failed with a result. */
export function recognizeSystemd(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  const r = UNIT_RESULT.exec(text);
  if (r) return unitEvent(input, unitVerdict('fail', false, 5), r[1]!, { result: r[2]! });
  if (text.startsWith('Failed to start '))
    return unitEvent(input, unitVerdict('start', false, 5), text.slice('Failed to start '.length));
  if (text.startsWith('Started '))
    return unitEvent(input, unitVerdict('start', true, 1), text.slice('Started '.length));
  if (text.startsWith('Stopped ')) return unitEvent(input, unitVerdict('stop', true, 1), text.slice('Stopped '.length));
  return undefined;
}

const NEW_SESSION = /^New session (\S{1,64}) of user (\S{1,256}?)\.?$/;
const REMOVED_SESSION = /^Removed session (\S{1,64}?)\.?$/;

/** Recognizes systemd-logind session start and removal. */
export function recognizeLogind(text: string, input: LinuxMessageInput): RecognizedMessage | undefined {
  const n = NEW_SESSION.exec(text);
  if (n) {
    const verdict: Verdict = {
      category: 'identity',
      class: 'authentication',
      activity: 'session_open',
      outcome: 'success',
      severity: 2,
    };
    return recognized(input, verdict, { session_id: n[1], user: n[2] });
  }
  const r = REMOVED_SESSION.exec(text);
  if (r) {
    const verdict: Verdict = {
      category: 'identity',
      class: 'authentication',
      activity: 'session_close',
      outcome: 'success',
      severity: 1,
    };
    return recognized(input, verdict, { session_id: r[1] });
  }
  return undefined;
}
