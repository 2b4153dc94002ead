import type { Database } from 'lmdb';
import { attestation, type LmdbEventLog } from './lmdb-log.js';
import type { LmdbStore } from './lmdb-store.js';
import { parseCheckpoint } from './checkpoint.js';
import { openNote, parseNote, type NoteVerifier } from './signed-note.js';
import type { HeadSigner } from './head-signer.js';
import { keyChain, openWithAny } from './key-rotation.js';
import { leafHash } from './merkle.js';
import { MissingRecordError } from './merkle-tree.js';

/** When checkpoints are made: every so many records or seconds (whichever comes first), and at stop. */
export interface CheckpointPolicy {
  readonly everyRecords: number;
  readonly everySeconds: number;
  /** Witnesses whose cosignatures the instance accepts and serves. */
  readonly witnesses: readonly NoteVerifier[];
}

/** Signed checkpoints and proofs over the log, as the API serves them. */
export interface Transparency {
  /** The instance's checkpoint signer's verifier (its name is the origin). */
  readonly verifier: NoteVerifier;
  /** The latest signed checkpoint (with any cosignatures), or the one of exactly `size` records. */
  checkpoint(size?: number): string | undefined;
  /** The stored checkpoints (with their cosignatures), newest first, at most `limit` of them. */
  recent(limit: number): string[];
  /** Records covered by durable tree nodes: proofs may be asked up to here. */
  committedSize(): number;
  /** Proofs from the live tree; one that needs a record a retention cut removed throws ProofNeedsArchive. */
  inclusion(seq: number, size: number): { leafHash: Uint8Array; path: Uint8Array[] };
  consistency(from: number, to: number): Uint8Array[];
  /** Adds the verified cosignatures of configured witnesses to the stored checkpoint they sign. */
  cosign(
    note: string,
  ): Promise<{ ok: true; note: string; added: number } | { ok: false; error: string; status: 400 | 404 }>;
  /** Makes a checkpoint at the committed size if it grew; resolves with the latest note. */
  make(): Promise<string | undefined>;
  /** Stops the triggers and makes a last checkpoint (call before the log closes). */
  stop(): Promise<void>;
}

/**
 * A proof that needs the bytes of records a retention cut removed from the live store (inclusion of
 * an expired record, consistency from a size inside an expired segment): it is made from the
 * archive of their segment instead (docs/log.md, "Retention").
 */
export class ProofNeedsArchive extends Error {
  override readonly name = 'ProofNeedsArchive';
}

/**
 * Starts checkpointing the log. A checkpoint is the signed head of a commit (src/log/lmdb-log.ts),
 * published: kept beside the log, in the `checkpoints` database keyed by tree size (docs/log.md says
 * why not in the log), and reported to the signer, which never rewinds a published head. Nothing is
 * signed here: a start does not sign records the signer did not witness. At start the latest
 * checkpoint must still match the tree (unless it is of a size before a retention cut), and the
 * latest signed head is published, so a checkpoint lost to a crash is replaced by one consistent with
 * everything published before it.
 */
export async function startCheckpointer(
  store: LmdbStore,
  log: LmdbEventLog,
  heads: HeadSigner,
  policy: CheckpointPolicy,
): Promise<Transparency> {
  const db: Database<string, number> = store.db('checkpoints', { keyEncoding: 'uint32' });
  const verifier = heads.verifier;
  // The signer takes the store up first: it publishes only heads it has. Its rotations link its key to the
  // keys that signed earlier checkpoints (docs/log.md, "Rotating the signing key").
  const keys = keyChain([verifier], (await log.signing)?.rotations ?? []);
  const latestStored = (): [number, string] | undefined => {
    for (const { key, value } of db.getRange({ reverse: true, limit: 1 })) return [key, value];
    return undefined;
  };
  const last = latestStored();
  if (last) {
    const opened = openWithAny(last[1], keys);
    const cp = opened.ok ? parseCheckpoint(opened.text) : undefined;
    // The root at a size before a retention cut may need the bytes of records the cut removed (a
    // process killed after the cut, before its next checkpoint): such a checkpoint is checked with
    // the archives (`vigil log verify --archives`), as `vigil log verify` does.
    const cut = log.cut();
    const beforeCut = cut !== undefined && cp?.ok === true && cp.checkpoint.size < cut.firstSeq - 1;
    if (
      !cp?.ok ||
      cp.checkpoint.size !== last[0] ||
      cp.checkpoint.size > log.tree.committedSize() ||
      (!beforeCut && !Buffer.from(cp.checkpoint.root).equals(Buffer.from(log.tree.root(cp.checkpoint.size))))
    ) {
      throw new Error(`the log no longer matches its checkpoint of ${last[0]} records: run vigil log verify`);
    }
  }
  let lastSize = last?.[0] ?? -1;
  let chain: Promise<string | undefined> = Promise.resolve(undefined);

  function make(): Promise<string | undefined> {
    chain = chain
      .catch(() => undefined)
      .then(async () => {
        const note = log.signedHead();
        const size = note === undefined ? -1 : attestation(note, store).size;
        if (note === undefined || size <= lastSize) return db.get(lastSize);
        // The signer first: a head it holds published is never contradicted, so a stop between the two leaves the
        // signer ahead of the stored checkpoints, never behind them (a retention cut follows a checkpoint, and a
        // restart must prove the store extends the published head from records the cut kept).
        await heads.publish(note);
        await log.commit(() => db.putSync(size, note));
        lastSize = size;
        return note;
      });
    return chain;
  }

  await make();
  let stopped = false;
  let queued = false;
  // One checkpoint queued at a time: the records that arrive meanwhile join the next one.
  const unfollow = log.follow(log.head().seq, (r) => {
    if (stopped || queued || r.seq - lastSize < policy.everyRecords) return;
    queued = true;
    void make().finally(() => {
      queued = false;
    });
  });
  const timer = setInterval(() => void make(), policy.everySeconds * 1000);
  timer.unref();

  const needsArchive = (seq: number) =>
    new ProofNeedsArchive(
      `the proof needs record ${seq}, which retention removed from the live log (it starts at record ` +
        `${log.first()}): make it from the archive of the record's segment`,
    );
  /** A proof made from the tree, or ProofNeedsArchive when it needs a record a cut removed. */
  function fromLiveRecords<T>(make: () => T): T {
    try {
      return make();
    } catch (err) {
      if (err instanceof MissingRecordError && err.seq < log.first()) throw needsArchive(err.seq);
      throw err;
    }
  }

  return {
    verifier,
    checkpoint: (size) => (size === undefined ? latestStored()?.[1] : db.get(size)),
    recent: (limit) => [...db.getRange({ reverse: true, limit })].map((e) => e.value),
    committedSize: () => log.tree.committedSize(),
    inclusion(seq, size) {
      if (seq > size) throw new RangeError(`record ${seq} is not in a tree of ${size}`);
      const bytes = log.readRaw(seq, seq)[Symbol.iterator]().next().value?.bytes;
      if (!bytes && seq < log.first()) throw needsArchive(seq);
      if (!bytes) throw new RangeError(`record ${seq} is not in a tree of ${size}`);
      return { leafHash: leafHash(bytes), path: fromLiveRecords(() => log.tree.inclusion(seq, size)) };
    },
    consistency: (from, to) => fromLiveRecords(() => log.tree.consistency(from, to)),
    async cosign(note) {
      const parsed = parseNote(note);
      if (!parsed.ok) return { ok: false, error: parsed.error, status: 400 };
      const cp = parseCheckpoint(parsed.text);
      if (!cp.ok) return { ok: false, error: cp.error, status: 400 };
      const stored = db.get(cp.checkpoint.size);
      const current = stored === undefined ? undefined : parseNote(stored);
      if (!current?.ok || current.text !== parsed.text)
        return { ok: false, error: `no checkpoint of ${cp.checkpoint.size} records with this text`, status: 404 };
      const have = new Set(current.signatures.map((s) => `${s.name} ${s.keyHash}`));
      const lines: string[] = [];
      for (const w of policy.witnesses) {
        const opened = openNote(note, w);
        if (!opened.ok) continue;
        const mine = opened.signatures.find((s) => s.name === w.name && !have.has(`${s.name} ${s.keyHash}`));
        if (mine)
          lines.push(`\u2014 ${mine.name} ${Buffer.concat([u32(mine.keyHash), mine.signature]).toString('base64')}\n`);
      }
      if (lines.length === 0)
        return { ok: false, error: 'no new verifiable signature of a configured witness', status: 400 };
      const merged = `${stored}${lines.join('')}`;
      await log.commit(() => db.putSync(cp.checkpoint.size, merged));
      return { ok: true, note: merged, added: lines.length };
    },
    make,
    async stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      unfollow();
      await make();
    },
  };
}

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
}
