import type { LmdbStore } from './lmdb-store.js';
import type { LogView } from './log-view.js';
import { parseCheckpoint } from './checkpoint.js';
import { appendLeaf, frontierRoot, leafHash, type Frontier } from './merkle.js';
import { keyChain, openWithAny } from './key-rotation.js';
import { rotationNotesIn } from './rotation-records.js';
import { parseNote, verifierKeyString, type NoteVerifier } from './signed-note.js';

/** The tree's verdict: ok with the root and checkpoints checked, or the first disagreement. */
export type TreeVerdict =
  | {
      readonly ok: true;
      readonly root: string;
      readonly checkpoints: number;
      readonly checkpointsBeforeCut?: number;
      /** Records covered by the last signed head (or the latest checkpoint): past it, no signing Vigil wrote them. */
      readonly attested: number;
      /** The verifier keys the signatures were checked with: those given and those the log's rotations link to them. */
      readonly keys?: readonly string[];
    }
  | { readonly ok: false; readonly reason: string };

/**
 * Recomputes the Merkle root from every record's bytes and compares it with the stored tree, and
 * with each stored checkpoint at its size (its signature too, when the verifier key is given).
 * After a retention cut the walk starts from the stored tree at the cut, which must have the root
 * the cut recorded; checkpoints of sizes before the cut are checked with the archives
 * (`vigil log verify --archives`), not here. The signed head of the last commit is checked the same
 * way (signature, and the root at its size); it and the checkpoints say how far the log is attested.
 * With `upTo` (a snapshot's bound, while the service goes on writing), checkpoints of larger sizes are
 * left out: they were made after the log was read. Signatures are checked with a chain of keys: those
 * given, and every key the log's `LogKeyRotated` records link to them (src/log/key-rotation.ts), so a
 * verifier holding the old key or the new one verifies the whole log; they are checked once the walk
 * has read every rotation.
 */
export function verifyTree(
  store: Pick<LmdbStore, 'db'>,
  log: LogView,
  key?: NoteVerifier | readonly NoteVerifier[],
  upTo?: number,
): TreeVerdict {
  const checkpoints = store.db<string, number>('checkpoints', { keyEncoding: 'uint32' });
  const cut = log.cut();
  const start = cut ? cut.firstSeq - 1 : 0;
  const due = new Map<number, string[]>();
  let beforeCut = 0;
  let attested = 0;
  const expect = (size: number, note: string) => {
    due.set(size, [...(due.get(size) ?? []), note]);
    attested = Math.max(attested, size);
  };
  for (const { key: size, value } of checkpoints.getRange({})) {
    if (upTo !== undefined && size > upTo) continue;
    if (size < start) beforeCut++;
    else expect(size, value);
  }
  const signedHead = log.signedHead();
  if (signedHead !== undefined) {
    const parsed = parseNote(signedHead);
    const cp = parsed.ok ? parseCheckpoint(parsed.text) : undefined;
    if (!cp?.ok) return { ok: false, reason: 'the signed head is not a checkpoint note' };
    expect(cp.checkpoint.size, signedHead);
  }
  let f: Frontier = { size: 0, roots: [] };
  if (cut) {
    try {
      f = log.tree.frontierAt(start);
    } catch (err) {
      return {
        ok: false,
        reason: `the stored Merkle tree at the cut (${start} records) is incomplete: ${(err as Error).message}`,
      };
    }
    if (Buffer.from(frontierRoot(f)).toString('base64') !== cut.treeRoot)
      return {
        ok: false,
        reason: `the stored Merkle tree at the cut (${start} records) does not have the root the cut recorded`,
      };
  }
  let checked = 0;
  const rotations: string[] = [];
  const signed: Array<{ note: string; what: string; size: number }> = [];
  const check = (): string | undefined => {
    for (const note of due.get(f.size) ?? []) {
      const what = note === signedHead ? 'signed head' : 'checkpoint';
      const opened = parseNote(note);
      if (!opened.ok) return `${what} of ${f.size} records: ${opened.error}`;
      signed.push({ note, what, size: f.size });
      const cp = parseCheckpoint(opened.text);
      if (!cp.ok || cp.checkpoint.size !== f.size) return `${what} of ${f.size} records does not parse`;
      if (!Buffer.from(cp.checkpoint.root).equals(Buffer.from(frontierRoot(f))))
        return `the log's root at ${f.size} records differs from its ${what}: the log was changed after it was signed`;
      checked++;
    }
    return undefined;
  };
  const first = check();
  if (first) return { ok: false, reason: first };
  for (const { bytes } of log.readRaw(1)) {
    rotations.push(...rotationNotesIn(bytes));
    appendLeaf(f, leafHash(bytes));
    const bad = check();
    if (bad) return { ok: false, reason: bad };
  }
  const root = frontierRoot(f);
  const notes = [...due.values()].reduce((n, l) => n + l.length, 0);
  if (checked < notes) return { ok: false, reason: `${notes - checked} checkpoint(s) are of sizes beyond the log` };
  const keys = key === undefined ? undefined : keyChain(Array.isArray(key) ? key : [key as NoteVerifier], rotations);
  for (const { note, what, size } of keys ? signed : []) {
    const opened = openWithAny(note, keys!);
    if (!opened.ok) return { ok: false, reason: `${what} of ${size} records: ${opened.error}` };
  }
  if (log.tree.size() !== f.size || !Buffer.from(log.tree.root()).equals(Buffer.from(root)))
    return { ok: false, reason: 'the stored Merkle tree does not match the records (run vigil replay to rebuild it)' };
  return {
    ok: true,
    root: Buffer.from(root).toString('base64'),
    checkpoints: checked - (signedHead === undefined ? 0 : 1),
    ...(cut ? { checkpointsBeforeCut: beforeCut } : {}),
    attested,
    ...(keys && keys.length > 1 ? { keys: keys.map(verifierKeyString) } : {}),
  };
}
