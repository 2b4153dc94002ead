import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { ensurePrivateDir, readJsonFile, syncDir, writeDurable } from './state-files.js';

/** Where each source stands: the journal cursor and, per tailed file, its inode and offset. */
export interface SourceCursors {
  readonly journal?: string;
  readonly files?: Readonly<Record<string, { readonly ino: number; readonly offset: number }>>;
}

/** One spooled envelope, with the source cursors reached once its events are in it. */
export interface SpoolEntry {
  readonly sequence: number;
  readonly envelope: {
    algorithm: 'Ed25519';
    payload: Record<string, unknown> & { sequence: number };
    signature: string;
  };
  readonly cursors: SourceCursors;
  readonly events: number;
}

/** What survives acknowledgements: the last acknowledged sequence and the cursors it reached. */
export interface AckState {
  readonly lastAcked: number;
  readonly cursors: SourceCursors;
  readonly ackedAt?: string;
}

const NAME = /^(\d{12})\.json$/;
const nameOf = (seq: number) => `${String(seq).padStart(12, '0')}.json`;

/**
 * The on-disk spool: one file per envelope, written durably before it is ever sent, deleted only
 * after the server acknowledged it (and after the acknowledgement state is durable). Sequence
 * numbers and cursors are recovered from it after any crash.
 */
export class Spool {
  readonly dir: string;
  private readonly ackPath: string;

  /**
   * Opens the spool without changing anything on disk: `vigil collector status` reads a spool that a
   * running agent is writing, so only its owner (the agent at start, enrollment) calls `recover`,
   * which also makes the directory. A spool whose directory is not there yet is empty.
   */
  constructor(stateDir: string) {
    this.dir = join(stateDir, 'spool');
    this.ackPath = join(stateDir, 'acked.json');
  }

  /**
   * Makes the spool's directory (owner-only) if need be and finishes what a crash interrupted: drops
   * entries at or below the acknowledged sequence (a crash between ack and delete) and half-written
   * temp files. Only the spool's owner may call it, never while an agent runs on the same state
   * directory: the temp file it would delete may be that agent's write in progress.
   */
  recover(): this {
    ensurePrivateDir(this.dir);
    for (const n of readdirSync(this.dir)) if (/\.tmp-\d+$/.test(n)) unlinkSync(join(this.dir, n));
    const { lastAcked } = this.ack();
    for (const s of this.sequences()) if (s <= lastAcked) this.remove(s);
    return this;
  }

  /** The acknowledgement state (lastAcked 0 and no cursors at first). */
  ack(): AckState {
    return readJsonFile<AckState>(this.ackPath) ?? { lastAcked: 0, cursors: {} };
  }

  /** Spooled sequences, oldest first. */
  sequences(): number[] {
    return this.names()
      .map((n) => NAME.exec(n))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => Number(m[1]))
      .sort((a, b) => a - b);
  }

  /** The names in the spool's directory (none before its owner made it). */
  private names(): string[] {
    try {
      return readdirSync(this.dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
  }

  /** One spooled entry. */
  read(sequence: number): SpoolEntry {
    return JSON.parse(readFileSync(join(this.dir, nameOf(sequence)), 'utf8')) as SpoolEntry;
  }

  /**
   * What the spool holds now, read from outside the agent: entries the running agent removes
   * (acknowledged) between the listing and the read are left out, not an error.
   */
  backlog(): {
    envelopes: number;
    events: number;
    bytes: number;
    oldestSequence: number | null;
    newestSequence: number | null;
  } {
    const backlog = {
      envelopes: 0,
      events: 0,
      bytes: 0,
      oldestSequence: null as number | null,
      newestSequence: null as number | null,
    };
    for (const sequence of this.sequences()) {
      let text: string;
      try {
        text = readFileSync(join(this.dir, nameOf(sequence)), 'utf8');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw err;
      }
      backlog.envelopes++;
      backlog.events += (JSON.parse(text) as SpoolEntry).events;
      backlog.bytes += Buffer.byteLength(text);
      backlog.oldestSequence ??= sequence;
      backlog.newestSequence = sequence;
    }
    return backlog;
  }

  /** The next sequence to assign. */
  nextSequence(): number {
    return Math.max(this.ack().lastAcked, this.sequences().at(-1) ?? 0) + 1;
  }

  /** The cursors to resume the sources from: the newest spooled entry's, else the acknowledged ones. */
  resumeCursors(): SourceCursors {
    const last = this.sequences().at(-1);
    return last !== undefined ? this.read(last).cursors : this.ack().cursors;
  }

  /** Writes an entry durably (fsync of file and directory) before it may be sent. */
  append(entry: SpoolEntry): void {
    writeDurable(join(this.dir, nameOf(entry.sequence)), JSON.stringify(entry));
  }

  /** Records an acknowledgement durably, then forgets the entry. */
  acknowledge(entry: SpoolEntry, at: string): void {
    writeDurable(
      this.ackPath,
      JSON.stringify({ lastAcked: entry.sequence, cursors: entry.cursors, ackedAt: at } satisfies AckState),
    );
    this.remove(entry.sequence);
  }

  /** Sets the last acknowledged sequence (resynchronisation), keeping the cursors. */
  setLastAcked(lastAcked: number): void {
    writeDurable(this.ackPath, JSON.stringify({ ...this.ack(), lastAcked }));
  }

  /** Moves an entry the server refused as malformed aside, for an operator to inspect. */
  quarantine(sequence: number): void {
    const dir = join(this.dir, '..', 'rejected');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    renameSync(join(this.dir, nameOf(sequence)), join(dir, `${Date.now()}-${nameOf(sequence)}`));
    syncDir(this.dir);
  }

  /** Deletes an entry durably. */
  remove(sequence: number): void {
    const path = join(this.dir, nameOf(sequence));
    if (existsSync(path)) {
      unlinkSync(path);
      syncDir(this.dir);
    }
  }
}
