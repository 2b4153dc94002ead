import { existsSync } from 'node:fs';
import { decodeRecord } from '../log/record.js';
import { openInstanceStore, type OpenOptions } from '../instance/open.js';
import { exportLine } from '../log/export-line.js';
import { loadOrCreateLogKey, logKeyPath } from '../log/log-key.js';
import { verifierOf } from '../log/signed-note.js';
import { verifyLog, type VerifyResult } from '../log/verify.js';
import { verifyTree, type TreeVerdict } from '../log/verify-tree.js';
import type { Stats } from '../projections/stats.js';

/** `vigil log verify`: walks the chain, then the Merkle tree and the stored checkpoints; resolves with the verdict. */
export async function logVerify(storePath: string, opts: OpenOptions = {}): Promise<VerifyResult | (VerifyResult & { tree: TreeVerdict })> {
  const inst = await openInstanceStore(storePath, opts);
  try {
    const chain = verifyLog(inst.log);
    if (!chain.ok) return chain;
    const keyFile = logKeyPath(storePath);
    const tree = verifyTree(inst.store, inst.log, existsSync(keyFile) ? verifierOf(loadOrCreateLogKey(keyFile)) : undefined);
    return tree.ok ? { ...chain, tree } : { ok: false, records: chain.records, badSeq: chain.records, reason: tree.reason, tree };
  } finally {
    await inst.close();
  }
}

/**
 * `vigil log export`: writes records `from..to` as JSON lines (bigints as strings, bytes as base64)
 * to `write`; with `raw`, each line also holds its record's stored bytes (base64) for offline verification. A value nested past the edge's bound (possible only in an old log) is shown clamped;
 * the stored bytes, which the chain hashes, are untouched.
 */
export async function logExport(storePath: string, from: number, to: number | undefined, write: (line: string) => void, opts: OpenOptions = {}, raw = false): Promise<number> {
  const inst = await openInstanceStore(storePath, opts);
  let n = 0;
  try {
    for (const { bytes } of inst.log.readRaw(from, to)) {
      write(exportLine(decodeRecord(bytes), raw ? bytes : undefined));
      n++;
    }
    return n;
  } finally {
    await inst.close();
  }
}

/** `vigil replay [--until SEQ]`: rebuilds every read model from record 1 and reports rate and counts. */
export async function replay(storePath: string, until: number | undefined, opts: OpenOptions = {}): Promise<Record<string, unknown>> {
  const inst = await openInstanceStore(storePath, opts);
  try {
    const head = inst.log.head().seq;
    if (until !== undefined && (until < 0 || until > head)) throw new Error(`--until ${until} is outside the log (head is ${head})`);
    const started = performance.now();
    // The write side folds in this thread while the read side folds in its worker, at once.
    const [records] = await Promise.all([inst.runtime.rebuild(until), inst.readSide.rebuild(until ?? head), until === undefined ? inst.log.tree.rebuild() : undefined]);
    const seconds = (performance.now() - started) / 1000;
    const stats = inst.runtime.state<Stats>('stats');
    const graph = await inst.readSide.snapshot('graph') as { e: { key: unknown[] }; r: { from: unknown[] } };
    if (until !== undefined) await Promise.all([inst.runtime.rebuild(), inst.readSide.rebuild(head)]);
    return {
      records, until: until ?? head, seconds: Number(seconds.toFixed(3)), recordsPerSecond: Math.round(records / Math.max(seconds, 1e-6)),
      recordsByType: stats.records, eventsByCategory: stats.events,
      graph: { entities: graph.e.key.length, relationships: graph.r.from.length },
    };
  } finally {
    await inst.close();
  }
}
