import { recognized, type Verdict } from './build.js';
import type { LinuxMessageInput, RecognizedMessage } from './types.js';

/** Reads one journal field of the entry being normalized as a string. */
export type JournalField = (name: string) => string | undefined;

type CatalogEntry = (field: JournalField, input: LinuxMessageInput) => RecognizedMessage;

function unitEvent(activity: string, ok: boolean, severity: number, resultField?: string): CatalogEntry {
  const verdict: Verdict = {
    category: 'system',
    class: 'service',
    activity,
    outcome: ok ? 'success' : 'failure',
    severity,
  };
  return (field, input) => {
    // PID 1 names the unit it talks about in UNIT; a user manager uses USER_UNIT.
    const unit = field('UNIT') ?? field('USER_UNIT');
    const result = resultField === undefined ? undefined : field(resultField);
    return recognized(input, verdict, { unit, result }, unit === undefined ? {} : { service: { name: unit } });
  };
}

function sessionEvent(opened: boolean): CatalogEntry {
  const verdict: Verdict = {
    category: 'identity',
    class: 'authentication',
    activity: opened ? 'session_open' : 'session_close',
    outcome: 'success',
    severity: opened ? 2 : 1,
  };
  // logind's USER_ID holds the user *name*; SESSION_ID and LEADER (the session's first pid) are its own fields.
  return (field, input) =>
    recognized(input, verdict, { user: field('USER_ID'), session_id: field('SESSION_ID'), leader: field('LEADER') });
}

const coredump: CatalogEntry = (field, input) => {
  const verdict: Verdict = { category: 'system', class: 'process', activity: 'crash', outcome: 'failure', severity: 5 };
  return recognized(
    input,
    verdict,
    {
      pid: field('COREDUMP_PID'),
      process: field('COREDUMP_COMM'),
      uid: field('COREDUMP_UID'),
      signal: field('COREDUMP_SIGNAL_NAME'),
      unit: field('COREDUMP_UNIT'),
    },
    { actorUser: null },
  );
};

/** MESSAGE_IDs from systemd's sd-messages.h that carry structured fields worth more than the text. */
const CATALOG: ReadonlyMap<string, CatalogEntry> = new Map([
  ['39f53479d3a045ac8e11786248231fbf', unitEvent('start', true, 1)], // SD_MESSAGE_UNIT_STARTED
  // SD_MESSAGE_UNIT_FAILED (a failed start job)
  ['be02cf6855d2428ba40df7e9d022f03d', unitEvent('start', false, 5, 'JOB_RESULT')],
  ['9d1aaa27d60140bd96365438aad20286', unitEvent('stop', true, 1)], // SD_MESSAGE_UNIT_STOPPED
  ['d9b373ed55a64feb8242e02dbe79a49c', unitEvent('fail', false, 5, 'UNIT_RESULT')], // SD_MESSAGE_UNIT_FAILURE_RESULT
  ['fe6faa94e7774663a0da52717891d8ef', unitEvent('oom_kill', false, 6)], // SD_MESSAGE_UNIT_OUT_OF_MEMORY
  ['8d45620c1a4348dbb17410da57c60c66', sessionEvent(true)], // SD_MESSAGE_SESSION_START
  ['3354939424b4456d9802ca8333ed424a', sessionEvent(false)], // SD_MESSAGE_SESSION_STOP
  ['fc2e22bc6ee647b6b90729ab34a250b1', coredump], // SD_MESSAGE_COREDUMP
]);

/** Recognizes a journal entry by its MESSAGE_ID (systemd unit jobs, logind sessions, coredumps). */
export function recognizeJournalCatalog(
  messageId: string | undefined,
  field: JournalField,
  input: LinuxMessageInput,
): RecognizedMessage | undefined {
  if (messageId === undefined) return undefined;
  const entry = CATALOG.get(messageId.toLowerCase());
  return entry?.(field, input);
}
