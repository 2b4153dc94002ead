import type { LogView } from '../../log/log-view.js';
import { parseCheckpoint } from '../../log/checkpoint.js';
import { appendLeaf, frontierRoot, leafHash, type Frontier } from '../../log/merkle.js';
import { readExportLine } from '../../log/offline-verify.js';
import { decodeRecord, hashBytes } from '../../log/record.js';
import { GENESIS_HASH, type LogRecord } from '../../kernel/record.js';
import { openNote, parseNote, type NoteVerifier } from '../../log/signed-note.js';
import type { RetentionDays } from '../../log/retention/kinds.js';
import { asRecord, carriedBy, stillKept } from '../../log/retention/plan.js';
import type { ReadArchive } from './archive.js';
import type { HistoryVerdict } from './verify-archives.js';

/** One cut as the log recorded it: what it expired, what it carried forward, and the policy it had to honour. */
export interface CutCheck {
  readonly seq: number;
  readonly at: string;
  readonly days: RetentionDays | undefined;
  readonly ranges: ReadonlyArray<readonly [number, number]>;
  /** Original seq → hash of every copy the cut's RecordsCarriedForward holds (deleted as matched). */
  readonly carried: Map<number, string>;
}

/** A signed checkpoint the walk must meet at its size, with the key to open it (none: its signature is not checked). */
export interface DueCheckpoint {
  readonly note: string;
  readonly key: NoteVerifier | undefined;
}

/**
 * Where the walk over the whole history is, for verifying it: the Merkle frontier of the records walked, the hash of
 * the last one, the cut it has reached, and how many due checkpoints it has met.
 */
export interface HistoryWalk {
  readonly f: Frontier;
  prev: string;
  checked: number;
  cutAt: number;
  readonly cuts: readonly CutCheck[];
  readonly due: ReadonlyMap<number, DueCheckpoint>;
}

/** A walk from before record 1, to hold the history to `cuts` and to the checkpoints `due`. */
export function startWalk(cuts: readonly CutCheck[], due: ReadonlyMap<number, DueCheckpoint>): HistoryWalk {
  return { f: { size: 0, roots: [] }, prev: GENESIS_HASH, checked: 0, cutAt: 0, cuts, due };
}

/** The cut that expired record `seq`, if one did; the walk moves past the cuts wholly behind it. */
function cutOf(w: HistoryWalk, seq: number): CutCheck | undefined {
  while (w.cutAt < w.cuts.length && w.cuts[w.cutAt]!.ranges.every(([, to]) => to < seq)) w.cutAt++;
  const c = w.cuts[w.cutAt];
  return c?.ranges.some(([from, to]) => from <= seq && seq <= to) ? c : undefined;
}

/**
 * Whether an expired record (or a copy it carried) was carried forward intact, or dropped as the recorded policy
 * allowed.
 */
function judge(cut: CutCheck, r: LogRecord, hash: string): string | undefined {
  const copy = cut.carried.get(r.seq);
  if (copy !== undefined) {
    if (copy !== hash)
      return `the cut at record ${cut.seq} carried forward a copy of record ${r.seq} that differs from the original`;
    cut.carried.delete(r.seq);
    return undefined;
  }
  const held = carriedBy(r);
  if (held) {
    for (const c of held) {
      const bad = judge(cut, asRecord(c), c.hash);
      if (bad) return bad;
    }
    return undefined;
  }
  if (!cut.days) return `the cut at record ${cut.seq} expired records under no retention policy recorded before it`;
  if (stillKept(r.type, r.at, cut.days, cut.at))
    return (
      `the cut at record ${cut.seq} dropped record ${r.seq} (${r.type}), which the retention policy recorded ` +
      `before it keeps`
    );
  return undefined;
}

/** Checks the checkpoint due at the walk's size, if one is: it must sign the root recomputed there. */
function checkpointAt(w: HistoryWalk): string | undefined {
  const { f } = w;
  const at = w.due.get(f.size);
  if (at === undefined) return undefined;
  const opened = at.key ? openNote(at.note, at.key) : parseNote(at.note);
  const cp = opened.ok ? parseCheckpoint(opened.text) : undefined;
  if (!cp?.ok || cp.checkpoint.size !== f.size)
    return `checkpoint of ${f.size} records: ${opened.ok ? 'does not parse' : opened.error}`;
  if (!Buffer.from(cp.checkpoint.root).equals(Buffer.from(frontierRoot(f))))
    return `the root of ${f.size} records differs from its signed checkpoint`;
  w.checked++;
  return undefined;
}

/** Walks one record: it must be the next, link to the last, honour the cut that expired it and meet its checkpoint. */
function step(w: HistoryWalk, seq: number, record: LogRecord, bytes: Uint8Array): HistoryVerdict | undefined {
  const { f } = w;
  if (seq !== f.size + 1)
    return {
      ok: false,
      badSeq: f.size + 1,
      reason:
        seq > f.size + 1
          ? `records ${f.size + 1}..${seq - 1} are missing: no archive holds them`
          : `record ${seq} is out of place`,
    };
  if (record.seq !== seq) return { ok: false, badSeq: seq, reason: `record stored as ${seq} says it is ${record.seq}` };
  if (record.prev !== w.prev)
    return {
      ok: false,
      badSeq: seq,
      reason: `chain broken: record ${seq} does not link to the hash of record ${seq - 1}`,
    };
  w.prev = hashBytes(bytes);
  appendLeaf(f, leafHash(bytes));
  const cut = cutOf(w, seq);
  const dropped = cut ? judge(cut, record, w.prev) : undefined;
  if (dropped) return { ok: false, badSeq: seq, reason: dropped };
  const bad = checkpointAt(w);
  return bad ? { ok: false, badSeq: seq, reason: bad } : undefined;
}

/** Walks one archive's records, which must start right after the last record walked and end where its header says. */
function walkArchive(w: HistoryWalk, a: ReadArchive): HistoryVerdict | undefined {
  const { f } = w;
  if (a.header.fromSeq !== f.size + 1)
    return {
      ok: false,
      badSeq: f.size + 1,
      reason: `records ${f.size + 1}..${a.header.fromSeq - 1} are missing: no archive holds them`,
    };
  for (const line of a.lines) {
    const r = readExportLine(line, f.size + 1);
    if (!r.ok)
      return {
        ok: false,
        ...(r.badSeq !== undefined ? { badSeq: r.badSeq } : {}),
        reason: `archive of ${a.header.fromSeq}..${a.header.toSeq}: ${r.reason}`,
      };
    const bad = step(w, r.record.seq, r.record, r.bytes);
    if (bad) return bad;
  }
  if (f.size !== a.header.toSeq)
    return {
      ok: false,
      badSeq: f.size + 1,
      reason: `archive of ${a.header.fromSeq}..${a.header.toSeq} ends after record ${f.size}`,
    };
  return undefined;
}

/** Walks the live store's records, which must start right after the last archived one. */
function walkLive(w: HistoryWalk, log: LogView): HistoryVerdict | undefined {
  const { f } = w;
  if (f.size + 1 !== log.first())
    return {
      ok: false,
      badSeq: f.size + 1,
      reason: `records ${f.size + 1}..${log.first() - 1} are missing: no archive holds them`,
    };
  for (const { seq, bytes } of log.readRaw(log.first())) {
    const record = decodeRecord(bytes);
    const bad = step(w, seq, record, bytes);
    if (bad) return bad;
  }
  return undefined;
}

/** Walks the whole history, the archives in order and then the live store; the first problem, or undefined. */
export function walkHistory(
  w: HistoryWalk,
  archives: readonly ReadArchive[],
  log: LogView,
): HistoryVerdict | undefined {
  const empty = checkpointAt(w);
  if (empty) return { ok: false, reason: empty };
  for (const a of archives) {
    const bad = walkArchive(w, a);
    if (bad) return bad;
  }
  return walkLive(w, log);
}

/**
 * The verdict once every record is walked: no cut carried forward a record it did not expire, the stored Merkle tree
 * is the one walked, and every due checkpoint was met.
 */
export function walkVerdict(w: HistoryWalk, log: LogView, archives: number): HistoryVerdict {
  const { f } = w;
  for (const cut of w.cuts) {
    const [stray] = cut.carried.keys();
    if (stray !== undefined)
      return {
        ok: false,
        badSeq: stray,
        reason: `the cut at record ${cut.seq} carried forward a record ${stray} that it did not expire`,
      };
  }
  const root = frontierRoot(f);
  if (log.tree.size() !== f.size || !Buffer.from(log.tree.root()).equals(Buffer.from(root)))
    return { ok: false, reason: 'the stored Merkle tree does not match the records' };
  if (w.checked < w.due.size)
    return {
      ok: false,
      reason:
        `${w.due.size - w.checked} checkpoint(s) are of sizes beyond the log ` +
        `(${[...w.due.keys()].filter((s) => s > f.size).join(', ')})`,
    };
  return {
    ok: true,
    records: f.size,
    archives,
    root: Buffer.from(root).toString('base64'),
    checkpoints: w.checked,
  };
}
