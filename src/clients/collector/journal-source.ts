import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { SubmittedEvent } from '../../events/collector-protocol/envelope.js';
import { linuxJournal } from '../../normalizers/linux-journal.js';
import { toSubmitted } from './submitted-event.js';

/** A running `journalctl -f -o json`. */
export interface JournalSource {
  pause(): void;
  resume(): void;
  stop(): void;
}

/** Callbacks of the journal source. */
export interface JournalHandlers {
  /** One entry as a submitted event, with the cursor reached once it is spooled. */
  onEvent(event: SubmittedEvent, cursor: string): void;
  onMessage(level: 'info' | 'warn', msg: string): void;
  now(): Date;
}

const MAX_ENTRY = 1024 * 1024;

/**
 * Follows the systemd journal from `cursor` (exclusive), or from now when there is none, through
 * `journalctl -f -o json`. Where there is no journalctl or no journal, it says so once and stops:
 * the other sources keep running.
 */
export function startJournal(command: string, cursor: string | undefined, h: JournalHandlers): JournalSource {
  const args = ['-f', '-o', 'json', '--no-pager', ...(cursor ? [`--after-cursor=${cursor}`] : ['-n', '0'])];
  let child: ChildProcess;
  try {
    child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    h.onMessage('warn', `journal collection skipped: cannot start ${command}: ${(err as Error).message}`);
    return { pause() {}, resume() {}, stop() {} };
  }
  let stopping = false;
  child.on('error', (err) =>
    h.onMessage(
      'warn',
      `journal collection skipped: ${command} is not available (${(err as NodeJS.ErrnoException).code ?? err.message})`,
    ),
  );
  child.stderr!.on('data', (c: Buffer) =>
    h.onMessage('warn', `journalctl: ${c.toString('utf8').trim().slice(0, 500)}`),
  );
  child.on('exit', (code) => {
    if (!stopping) h.onMessage('warn', `journal collection stopped: journalctl exited with ${code}`);
  });
  const lines = createInterface({ input: child.stdout!, crlfDelay: Infinity });
  lines.on('line', (line) => {
    if (line.length > MAX_ENTRY) return;
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const c = entry.__CURSOR;
    if (typeof c !== 'string') return;
    const r = linuxJournal.normalize(entry, { ingestedAt: h.now().toISOString() });
    if (r.ok && r.events[0]) h.onEvent(toSubmitted(r.events[0]), c);
  });
  return {
    pause: () => child.stdout!.pause(),
    resume: () => child.stdout!.resume(),
    stop() {
      stopping = true;
      lines.close();
      child.kill('SIGTERM');
    },
  };
}
