/**
 * The writer's side of signed heads: a `HeadSigner` signs the head of every commit, either in this
 * process (`embeddedHeadSigner`, the key file readable by the writer: development and single-user
 * installs) or in a signer process over a Unix socket (`vigil signer`, src/log/signer-socket.ts),
 * which holds the key the writer cannot read. Both keep the keeper's state (src/log/head-keeper.ts)
 * in a folder of their own, beside a journal of every resume that was not a plain continuation.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { syncDir, writeDurable } from '../kernel/secret-files.js';
import { ownerOnlyFolder } from './lmdb-store.js';
import {
  createHeadKeeper,
  EMPTY_KEEPER,
  type HeadKeeper,
  type KeeperState,
  type PresentedHead,
  type ResumeAnswer,
} from './head-keeper.js';
import { checkRotation, rotationsTo } from './key-rotation.js';
import { verifierOf, type NoteSigner, type NoteVerifier } from './signed-note.js';

/** Signs the log's heads: what the LMDB log asks once per commit. */
export interface HeadSigner {
  readonly verifier: NoteVerifier;
  /** Takes up the store where its last signed head left it (see `HeadKeeper.resume`). */
  resume(p: PresentedHead): Promise<ResumeAnswer>;
  /** Signs the head of `size` records with root `root`, after the leaves of the records since the last one. */
  sign(leaves: readonly Uint8Array[], size: number, root: Uint8Array): Promise<string>;
  /** The head in `note` was published as a checkpoint: it is never contradicted. */
  publish(note: string): Promise<void>;
  close(): Promise<void>;
}

/**
 * A keeper with its state kept in `stateDir` (0700): `keeper.json`, written durably (fsync) when a
 * resume or a publication moves it (a signature writes nothing: what must survive a restart is the
 * published head, and the writer's store brings the rest back, src/log/head-keeper.ts);
 * `journal.jsonl`, one line a resume that adopted, caught up, gave heads up or was refused, fsynced
 * before the answer.
 */
export interface KeeperHost {
  readonly keeper: HeadKeeper;
  resume(p: PresentedHead): ResumeAnswer;
  extend(leaves: readonly Uint8Array[], size: number, root: Uint8Array): string;
  publish(note: string): void;
  /** Writes the state now (at stop). */
  flush(): void;
}

export function openKeeperHost(key: NoteSigner, stateDir: string, now: () => Date = () => new Date()): KeeperHost {
  ownerOnlyFolder(stateDir);
  const stateFile = join(stateDir, 'keeper.json');
  const journalFile = join(stateDir, 'journal.jsonl');
  const initial = existsSync(stateFile) ? readKeeperState(readFileSync(stateFile, 'utf8'), stateFile) : EMPTY_KEEPER;
  // The rotations that led to this key: heads its old keys signed count as its own.
  const rotations = rotationsTo(verifierOf(key), readRotations(stateDir));
  const trusted = rotations.map((note) => (checkRotation(note) as { old: NoteVerifier }).old);
  const keeper = createHeadKeeper(key, initial, trusted);
  const write = () => writeDurable(stateFile, `${JSON.stringify(keeper.current())}\n`);
  const journal = (entry: Record<string, unknown>) =>
    appendLineDurably(journalFile, { at: now().toISOString(), ...entry });
  return {
    keeper,
    resume(p) {
      const before = keeper.current().size;
      const answer = keeper.resume(p);
      if (answer.ok && (answer.adopted || answer.rewound || p.size !== before)) {
        journal({
          resumed: p.size,
          ...(answer.adopted ? { adopted: true } : {}),
          ...(answer.rewound ? { rewound: answer.rewound } : { from: before }),
        });
      } else if (!answer.ok && 'refused' in answer) {
        journal({ refused: answer.refused, presented: p.size, signed: before });
      }
      if (!answer.ok) return answer;
      write();
      return rotations.length > 0 ? { ...answer, rotations } : answer;
    },
    extend(leaves, size, root) {
      return keeper.extend(leaves, size, root);
    },
    publish(note) {
      const floor = keeper.current().floor;
      keeper.publish(note);
      if (keeper.current().floor !== floor) write();
    },
    flush: write,
  };
}

/** The file of a keeper's rotations (src/log/key-rotation.ts): one JSON line `{at, note}` a rotation. */
export const ROTATIONS_FILE = 'rotations.jsonl';

/**
 * The rotation notes kept in a keeper's state folder, in the order recorded; throws naming the file when
 * a line is not a rotation note that checks (a folder someone edited is not trusted in part).
 */
export function readRotations(stateDir: string): string[] {
  const file = join(stateDir, ROTATIONS_FILE);
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, i) => {
      let note: unknown;
      try {
        note = (JSON.parse(line) as { note?: unknown }).note;
      } catch {
        /* said below */
      }
      const checked = typeof note === 'string' ? checkRotation(note) : { ok: false, error: 'no note' };
      if (!checked.ok) throw new Error(`line ${i + 1} of ${file} is not a key rotation: ${checked.error}`);
      return note as string;
    });
}

/**
 * Records a rotation note in a keeper's state folder (appended and fsynced; a running signer never
 * rewrites the file, so a rotation recorded beside it is not lost when it stops). Recording a note
 * already there does nothing. The note must check.
 */
export function recordRotation(stateDir: string, note: string, at: Date = new Date()): void {
  const checked = checkRotation(note);
  if (!checked.ok) throw new Error(`not a key rotation: ${checked.error}`);
  ownerOnlyFolder(stateDir);
  if (readRotations(stateDir).includes(note)) return;
  appendLineDurably(join(stateDir, ROTATIONS_FILE), { at: at.toISOString(), note });
}

/** Appends `entry` as one JSON line to `file` (0600) and fsyncs it before returning. */
function appendLineDurably(file: string, entry: Record<string, unknown>): void {
  const fd = openSync(file, 'a', 0o600);
  try {
    appendFileSync(fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Parses a keeper's state file, or throws naming it. */
export function readKeeperState(text: string, file: string): KeeperState {
  try {
    const s = JSON.parse(text) as KeeperState;
    const sizes = [s.size, s.floor.size];
    if (sizes.every((n) => Number.isSafeInteger(n) && n >= 0) && Array.isArray(s.roots))
      return { size: s.size, roots: s.roots, floor: { size: s.floor.size, root: String(s.floor.root) } };
  } catch {
    /* said below */
  }
  throw new Error(`${file} is not a head signer's state: restore it, or move it aside to start the signer afresh`);
}

/**
 * The signer in this process: the key is loaded from a file the writer can read. The same keeper
 * as a separate signer, without its separation (docs/log.md says when that is enough).
 */
export function embeddedHeadSigner(key: NoteSigner, stateDir: string): HeadSigner {
  const host = openKeeperHost(key, stateDir);
  return {
    verifier: host.keeper.verifier,
    resume: async (p) => host.resume(p),
    sign: async (leaves, size, root) => host.extend(leaves, size, root),
    publish: async (note) => host.publish(note),
    async close() {
      host.flush();
    },
  };
}
