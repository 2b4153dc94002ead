import { lowerThreadPriority } from '../projections/read-side/thread-priority.js';
import { decodeRecord } from '../log/record.js';
import { asInstanceRecord } from '../events/read.js';
import { openInstanceStore, type OpenOptions } from './instance/open.js';
import type { LogCut } from '../log/event-log.js';
import { carriedCopyProblem, verifyWithArchives, type HistoryVerdict } from '../services/retention/verify-archives.js';
import { liveAuditors } from '../log/auditor-marks.js';
import { StoreLockedError } from '../log/event-log.js';
import { exportLine } from '../log/export-line.js';
import type { LogView } from '../log/log-view.js';
import { openStoreSnapshot } from '../log/store-snapshot.js';
import { parseVerifierKey, type NoteVerifier } from '../log/signed-note.js';
import { verifyLog, type VerifyResult } from '../log/verify.js';
import { verifyTree, type TreeVerdict } from '../log/verify-tree.js';
import type { Stats } from '../projections/stats.js';

/**
 * `vigil log verify [--archives DIR [--archive-keys FILE]]`: walks the chain (from the retention
 * cut), then the Merkle tree and the stored checkpoints; with the archive folder, the whole history
 * from record 1 (src/services/retention/verify-archives.ts), archives signed by other nodes' keys checked
 * with `archiveKeys`. Signatures are checked with `key` (or keys) and the keys the log's rotations link to
 * them (docs/log.md, "Rotating the signing key"). Resolves with the verdict. It reads a read-only snapshot of
 * the store (src/log/store-snapshot.ts), so it runs beside a serving instance, and verifies the log up to the
 * head that snapshot read; `opts` is not read (nothing is folded), kept so that callers need not change.
 */
export async function logVerify(
  storePath: string,
  key: NoteVerifier | readonly NoteVerifier[] | undefined,
  opts: OpenOptions = {},
  archives?: string,
  archiveKeys: readonly NoteVerifier[] = [],
  inProcess = false,
): Promise<VerifyResult | (VerifyResult & { tree: TreeVerdict }) | (VerifyResult & { history: HistoryVerdict })> {
  const snap = openStoreSnapshot(storePath, { inProcess });
  try {
    const cut = snap.log.cut();
    // Records carried forward by a cut are checked in the same walk: each copy must be its original.
    const chain = verifyLog(snap.log, cut, carriedCopyProblem);
    if (!chain.ok) return chain;
    if (cut && !cutRecorded(snap.log, cut))
      return {
        ok: false,
        records: chain.records,
        badSeq: cut.firstSeq,
        reason: `no LogSegmentsExpired record in the log names the cut at ${cut.firstSeq}`,
      };
    // Without the key a signature cannot be checked: say so rather than count it as verified.
    if (!key && (snap.log.signedHead() !== undefined || snap.checkpoints.length > 0)) {
      return {
        ok: false,
        records: chain.records,
        badSeq: chain.records,
        reason:
          'the log signing key is not available here: the signed head and checkpoints cannot be verified (give ' +
          'the signer key file or socket in log.signer, or run as the user who may read it)',
      };
    }
    const tree = verifyTree(snap.store, snap.log, key, snap.log.head().seq);
    if (!tree.ok) return { ok: false, records: chain.records, badSeq: chain.records, reason: tree.reason, tree };
    const head = snap.log.head().seq;
    if (tree.attested < head)
      return {
        ok: false,
        records: chain.records,
        badSeq: tree.attested + 1,
        reason:
          `records ${tree.attested + 1} to ${head} are unattested: no signed head covers them, so no signing ` +
          `Vigil wrote them (vigil log quarantine-tail sets them aside)`,
        tree,
      };
    if (archives === undefined) return { ...chain, tree };
    const stored = snap.checkpoints.map(([k, value]) => [k, value] as [number, string]);
    // Archives signed before a rotation are checked with the keys of the chain too.
    const linked = (tree.keys ?? []).map((k) => parseVerifierKey(k)!);
    const keys = Array.isArray(key) ? key : key ? [key as NoteVerifier] : [];
    const history = verifyWithArchives(snap.log, snap.carried, archives, stored, keys[0], [...archiveKeys, ...linked]);
    return history.ok
      ? { ...chain, history }
      : { ok: false, records: chain.records, badSeq: history.badSeq ?? 0, reason: history.reason, history };
  } finally {
    await snap.close();
  }
}

/** Whether the live log holds the cut record that the log's cut mark says (same place, hash and root). */
function cutRecorded(log: LogView, cut: LogCut): boolean {
  if (cut.atSeq === undefined) return false;
  for (const r of log.read(cut.atSeq, cut.atSeq)) {
    const known = asInstanceRecord(r);
    return (
      known?.type === 'LogSegmentsExpired' &&
      known.data.firstSeq === cut.firstSeq &&
      known.data.prevHash === cut.prevHash &&
      known.data.treeRoot === cut.treeRoot
    );
  }
  return false;
}

/**
 * `vigil log export`: writes records `from..to` as JSON lines (bigints as strings, bytes as base64)
 * to `write`; with `raw`, each line also holds its record's stored bytes (base64) for offline verification. A value
 * nested past the edge's bound (possible only in an old log) is shown clamped; the stored bytes, which the chain
 * hashes, are untouched. It reads a read-only snapshot of the store (beside a serving instance), up to the
 * head when it started; `opts` is not read, kept so that callers need not change.
 */
export async function logExport(
  storePath: string,
  from: number,
  to: number | undefined,
  write: (line: string) => void,
  opts: OpenOptions = {},
  raw = false,
): Promise<number> {
  const snap = openStoreSnapshot(storePath);
  let n = 0;
  try {
    for (const { bytes } of snap.log.readRaw(from, to)) {
      write(exportLine(decodeRecord(bytes), raw ? bytes : undefined));
      n++;
    }
    return n;
  } finally {
    await snap.close();
  }
}

/**
 * `vigil replay [--until SEQ]`: rebuilds every read model from record 1 and reports rate and counts. It
 * writes (the read models, the tree), so it needs the service stopped, and refuses while an auditor
 * reads the store; `vigil replay --out` (src/cli/replay-out.ts) is the replay that runs beside them.
 * With `yieldToReadSide` (nice steps; the command passes it, as it ends with the replay), this
 * thread, which folds the write side, runs below the read side's worker once that has started: the
 * read side's fold is the longer of the two, and on a machine whose cores are all busy it then gets
 * the CPU first.
 */
export async function replay(
  storePath: string,
  until: number | undefined,
  opts: OpenOptions = {},
  yieldToReadSide = 0,
): Promise<Record<string, unknown>> {
  const inst = await openInstanceStore(storePath, opts);
  lowerThreadPriority(yieldToReadSide);
  try {
    // Auditors read the tree and the records while it runs; this replay rewrites the tree in place.
    const auditors = liveAuditors(storePath);
    if (auditors.length > 0)
      throw new StoreLockedError(
        `the store at ${storePath} is being read by process ${auditors.join(', ')} (vigil log verify, log export ` +
          `or replay --out), and a replay in place rewrites what it reads: run it once that has finished`,
      );
    const head = inst.log.head().seq;
    if (until !== undefined && (until < 0 || until > head))
      throw new Error(`--until ${until} is outside the log (head is ${head})`);
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    // The write side folds in this thread while the read side folds in its worker, at once.
    const [records] = await Promise.all([
      inst.runtime.rebuild(until),
      inst.readSide.rebuild(until ?? head),
      until === undefined && inst.log.first() === 1 ? inst.log.tree.rebuild() : undefined,
    ]);
    const seconds = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    const stats = inst.writer.models.stats;
    const graph = (await inst.readSide.snapshot('graph')) as { e: { key: unknown[] }; r: { from: unknown[] } };
    if (until !== undefined) await Promise.all([inst.runtime.rebuild(), inst.readSide.rebuild(head)]);
    return {
      records,
      until: until ?? head,
      seconds: Number(seconds.toFixed(3)),
      recordsPerSecond: Math.round(records / Math.max(seconds, 1e-6)),
      // Every thread of the process (both folds, the tree, V8's helpers), user and system time.
      cpuSeconds: Number(((cpu.user + cpu.system) / 1e6).toFixed(3)),
      recordsByType: stats.records,
      eventsByCategory: stats.events,
      graph: { entities: graph.e.key.length, relationships: graph.r.from.length },
    };
  } finally {
    await inst.close();
  }
}

/**
 * The verifier keys in a file, one a line (as `vigil log public-key` prints them); throws on a line that is not one.
 */
export function readVerifierKeys(text: string): NoteVerifier[] {
  return text.split('\n').flatMap((line, i) => {
    const l = line.trim();
    if (l.length === 0 || l.startsWith('#')) return [];
    const k = parseVerifierKey(l);
    if (!k) throw new Error(`line ${i + 1} of the archive keys is not a verifier key`);
    return [k];
  });
}
