import type { Database } from 'lmdb';
import { FatalStorageError, type EventLog, type LogCut, type LogHead } from './event-log.js';
import type { LmdbStore } from './lmdb-store.js';
import { lentReader, type LentDecode, type LentReader } from './lent-range.js';
import { leafHash } from './merkle.js';
import { frontierText, openMerkleTree, type MerkleTree } from './merkle-tree.js';
import { decodeRecord, hashBytes, keptRecord } from './record.js';
import { linkBatch } from './chain.js';
import { GENESIS_HASH, type LogRecord, type NewRecord } from '../kernel/record.js';
import type { HeadSigner } from './head-signer.js';
import type { ResumeAnswer } from './head-keeper.js';
import { parseNote } from './signed-note.js';
import { parseCheckpoint } from './checkpoint.js';

/** What the signer said when it took the store up. */
export type ResumeResult = Extract<ResumeAnswer, { ok: true }>;

/**
 * The store's attestation: its signed head, or in a store written before signed heads its latest
 * checkpoint (both signed notes; their signatures are checked by the signer and by `vigil log verify`);
 * without either, the start of the records it holds (record 1, or its cut).
 */
export function storedAttestation(store: LmdbStore): { size: number; note?: string } {
  return attestation(store.db<string, string>('log-meta').get(SIGNED_HEAD), store);
}

/** The attestation of a store whose signed head is `signedHead` (see `storedAttestation`). */
export function attestation(signedHead: string | undefined, store: LmdbStore): { size: number; note?: string } {
  let note = signedHead;
  if (note === undefined) {
    const checkpoints = store.db<string, number>('checkpoints', { keyEncoding: 'uint32' });
    for (const { value } of checkpoints.getRange({ reverse: true, limit: 1 })) note = value;
  }
  // A copy that started from a retention cut (a JetStream node behind a purged prefix) begins at the cut.
  if (note === undefined)
    return { size: Math.max(0, (store.db<LogCut, string>('log-meta').get('cut')?.firstSeq ?? 1) - 1) };
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.text) : undefined;
  if (!cp?.ok)
    throw new Error(`the store's signed head is not a checkpoint note: ${parsed.ok ? cp?.error : parsed.error}`);
  return { size: cp.checkpoint.size, note };
}

/** Work to run inside the same LMDB write transaction as a batch (read-model updates, checkpoints). */
export type InTransaction = (records: readonly LogRecord[]) => void;

/** A batch whose seq and chain links are assigned, on its way to disk. */
export interface StagedBatch {
  /** The records as staged, for the caller's synchronous use. */
  readonly records: readonly LogRecord[];
  /** The same records as anything that holds them until `durable` keeps them (`keptRecord`). */
  readonly kept: readonly LogRecord[];
  /** Resolves once the batch is committed and flushed; rejects (fatally) when the outcome is unknown. */
  readonly durable: Promise<void>;
}

/** The LMDB log, with a hook that lets read models commit in the same transaction as the records. */
export interface LmdbEventLog extends EventLog {
  append(batch: readonly NewRecord[], inTransaction?: InTransaction): Promise<LogRecord[]>;
  /**
   * Assigns seq and links synchronously and queues the batch; batches staged in the same event
   * turn share one LMDB transaction and one flush (group commit).
   */
  stage(batch: readonly NewRecord[], inTransaction?: InTransaction, cut?: LogCut, signedHead?: string): StagedBatch;
  /** The first stored seq: 1, or the first record after the last cut. */
  first(): number;
  /**
   * The records the recorded head says the log holds but its store does not (its tail was cut or
   * lost), or undefined: such a store is verified (`vigil log verify` names the first), not served.
   */
  missingTail(): { readonly from: number; readonly to: number } | undefined;
  /**
   * Resolves once the signer has taken up the store (with what it said: a rewind is recorded by the
   * caller), or rejects with why it will not; undefined without a signer.
   */
  readonly signing: Promise<ResumeResult | undefined>;
  /** The signer of its heads, which the log closes with itself; absent in a log that signs none. */
  readonly signer?: HeadSigner;
  /**
   * Presents the store's last signed head to the signer again (a JetStream node about to lead: the heads
   * its copy holds were signed by the previous leader's signer).
   */
  resume(): Promise<ResumeResult>;
  /** The signed head of the last durable commit (a C2SP checkpoint note), when a signer signed one. */
  signedHead(): string | undefined;
  /** The records a signed head (or a checkpoint, in a store from before signed heads) covers. */
  attested(): number;
  /**
   * Records past the last signed head: not written by a signing Vigil (docs/log.md, "Signed heads"). A
   * start refuses such a store until `vigil log quarantine-tail` sets them aside.
   */
  unattestedTail(): { readonly from: number; readonly to: number } | undefined;
  /** The last cut, when retention removed a prefix. */
  cut(): LogCut | undefined;
  /** Runs writes in a durable transaction of their own (checkpoints, rebuilt read models). */
  commit(work: () => void): Promise<void>;
  /** The RFC 9162 Merkle tree over the records, maintained in their transactions (docs/log.md). */
  readonly tree: MerkleTree;
  /**
   * A reader of committed records as `decode` reads them from their bytes, lent for the call
   * without a copy of each (src/log/lent-range.ts): for folds over the whole log. Each is a database
   * handle of its own: open one a decoder and keep it.
   */
  openLentReader<T>(decode: LentDecode<T>): LentReader<T>;
}

/** A batch staged and waiting for its commit. */
interface Staged {
  readonly kept: readonly LogRecord[];
  readonly bytes: readonly Uint8Array[];
  readonly leaves: readonly Uint8Array[];
  readonly head: LogHead;
  readonly treeWrites: () => void;
  readonly inTransaction?: InTransaction;
  readonly cut?: LogCut;
  /** The batch's signed head when it came signed (a JetStream node: src/log/jetstream-apply.ts). */
  readonly signedHead?: string;
  readonly done: Deferred;
}

interface Deferred {
  readonly promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  promise.catch(() => undefined);
  return { promise, resolve, reject };
}

/**
 * Signatures a writer asks for before the first is answered: two, so that a signer apart (a round trip on
 * its socket) is never waited for with nothing else asked, while groups still form meanwhile.
 */
const SIGNING_AHEAD = 2;

/** Where the signed head of the last commit is kept, in `log-meta`, written in the commit's transaction. */
export const SIGNED_HEAD = 'signed-head';

/** Options of the LMDB log beyond its store. */
export interface LmdbLogOptions {
  /**
   * Signs the head of every commit in its transaction (docs/log.md, "Signed heads"); without one the
   * log writes no signed head (the setup authority's store, tests, and anything else that is not an
   * instance serving: what it appends is then unattested, and `vigil log verify` says so).
   */
  readonly signer?: HeadSigner;
  /**
   * The heads come signed with the batches (`stage`'s `signedHead`), not from this log's own signing: a
   * JetStream node's local copy, whose leader signs each batch before the stream has it. The signer is
   * then only taken up (and published to), never asked to sign here.
   */
  readonly headsFromCaller?: boolean;
}

/** Opens the log kept in `store` (databases `log` and `log-meta`). */
export function openLmdbLog(
  store: LmdbStore,
  onFatal: (err: Error) => void = () => {},
  { signer, headsFromCaller = false }: LmdbLogOptions = {},
): LmdbEventLog {
  // Who signs here: the signer, unless the heads come with the batches.
  const heads = headsFromCaller ? undefined : signer;
  const records: Database<Uint8Array, number> = store.db('log', { encoding: 'binary', keyEncoding: 'uint32' });
  const meta: Database<LogHead, string> = store.db('log-meta');
  const cutMeta = meta as unknown as Database<LogCut, string>;
  const signedHeadMeta = meta as unknown as Database<string, string>;
  let cut: LogCut | undefined = cutMeta.get('cut');
  const followers = new Set<(r: LogRecord) => void>();
  let head: LogHead = loadHead(records, meta);
  const openLentReader = <T>(decode: LentDecode<T>): LentReader<T> => lentReader(store.root, 'log', decode);
  // The tree hashes each leaf where lmdb-js reads its record, without a copy of it.
  const tree = openMerkleTree(store, openLentReader(leafHash), head.seq);
  let failed: Error | undefined;
  let pending: Promise<unknown> = Promise.resolve();

  function fail(err: unknown): never {
    failed ??= new FatalStorageError(`log write failed, outcome unknown: ${(err as Error)?.message ?? String(err)}`);
    onFatal(failed);
    throw failed;
  }

  /** Batches staged and waiting for their commit: with a signer, all those of an event turn share one signature. */
  let queue: Staged[] = [];
  let flushing = false;
  /** Signatures asked for and not yet answered: at most SIGNING_AHEAD, so groups keep forming meanwhile. */
  let signing = 0;
  let signedHead: string | undefined = signedHeadMeta.get(SIGNED_HEAD);
  let attested = attestation(signedHead, store).size;
  const ready: Promise<ResumeResult | undefined> = signer ? resumeSigning() : Promise.resolve(undefined);
  ready.catch(() => undefined);

  function stage(
    batch: readonly NewRecord[],
    inTransaction?: InTransaction,
    newCut?: LogCut,
    suppliedHead?: string,
  ): StagedBatch {
    if (failed) throw failed;
    if (newCut && !(newCut.firstSeq > (cut?.firstSeq ?? 1) && newCut.firstSeq <= head.seq + 1))
      throw new RangeError(`cannot cut the log at ${newCut.firstSeq}`);
    // Seq and chain links are assigned now, synchronously, so concurrent appends chain in call order.
    const { records: stored, bytes, head: newHead } = linkBatch(batch, head);
    // What the transaction and the followers hold until the batch is durable: not its events.
    const kept = stored.map((r, i) => keptRecord(r, bytes[i]!));
    const leaves = bytes.map(leafHash);
    const entry: Staged = {
      kept,
      bytes,
      leaves,
      head: newHead,
      treeWrites: tree.stageLeaves(leaves),
      ...(inTransaction ? { inTransaction } : {}),
      ...(newCut ? { cut: { ...newCut, atSeq: newHead.seq } } : {}),
      ...(suppliedHead !== undefined ? { signedHead: suppliedHead } : {}),
      done: deferred(),
    };
    head = newHead;
    queue.push(entry);
    // Without a signer each batch commits as it always did; with one, the turn's batches wait for one signature.
    if (!heads) flush();
    else if (!flushing && signing < SIGNING_AHEAD) {
      flushing = true;
      setImmediate(flush);
    }
    const durable = entry.done.promise;
    pending = durable;
    return { records: stored, kept, durable };
  }

  /** Commits the queued batches in one transaction, with the signed head of the last when there is a signer. */
  function flush(): void {
    flushing = false;
    if (queue.length === 0 || (heads && signing >= SIGNING_AHEAD)) return;
    const group = queue;
    queue = [];
    const last = group.at(-1)!.head;
    // The tree holds exactly the queue's records now: its staged root is the group's head.
    const root = heads ? tree.stagedRoot() : undefined;
    if (heads) signing++;
    const signature = heads
      ? ready.then(() =>
          heads.sign(
            group.flatMap((e) => e.leaves),
            last.seq,
            root!,
          ),
        )
      : undefined;
    // Signatures arrive in request order; when one arrives, the groups formed meanwhile are asked for.
    const committed = signature
      ? signature.then((note) => {
          signing--;
          if (queue.length > 0 && !flushing) {
            flushing = true;
            setImmediate(flush);
          }
          return commitGroup(group, note);
        })
      : commitGroup(group, group.at(-1)!.signedHead);
    const durable = (async () => {
      let note = group.at(-1)!.signedHead;
      try {
        note = (await signature) ?? note;
        await committed;
        await store.root.flushed;
      } catch (err) {
        fail(err);
      }
      if (note !== undefined) [signedHead, attested] = [note, last.seq];
      // A cut's head is published to the signer at once: a later proof from the signer's published head must not
      // need the records the cut removed (src/log/head-keeper.ts). Not awaited: groups settle in order, and a signer
      // that cannot be reached fails the next signature anyway.
      if (note !== undefined && signer && group.some((e) => e.cut)) void signer.publish(note).catch(() => undefined);
    })();
    for (const entry of group) {
      durable.then(
        () => {
          tree.settle(entry.head.seq);
          if (entry.cut) cut = entry.cut;
          for (const r of entry.kept) for (const f of followers) f(r);
          entry.done.resolve();
        },
        (err: unknown) => entry.done.reject(err),
      );
    }
  }

  /** The group's records, head, tree, cuts and signed head, in one child transaction: all or none of them. */
  function commitGroup(group: readonly Staged[], note: string | undefined): Promise<unknown> {
    return store.root.transaction(() =>
      store.root.transactionSync(() => {
        let current = cut;
        for (const entry of group) {
          const { kept, bytes } = entry;
          const first = kept[0]?.seq;
          const removeFrom = current?.firstSeq ?? 1;
          // A batch chains behind the one staged before it: if that one did not commit, this one must not
          // either, or the log has a hole. (The first record after a cut has no record before it: a
          // JetStream copy can start there.)
          if (
            first !== undefined &&
            (records.doesExist(first) || (first > (current?.firstSeq ?? 1) && !records.doesExist(first - 1)))
          ) {
            throw new FatalStorageError(
              `record ${first - 1} was not committed: refusing to write record ${first} after it`,
            );
          }
          for (let i = 0; i < kept.length; i++) records.putSync(kept[i]!.seq, bytes[i]!);
          if (kept.length > 0) meta.putSync('head', entry.head);
          if (entry.cut) {
            // The records go, the tree's nodes stay: proofs and checkpoints of the whole log still hold.
            for (let s = removeFrom; s < entry.cut.firstSeq; s++) records.removeSync(s);
            cutMeta.putSync('cut', entry.cut);
            current = entry.cut;
          }
          entry.treeWrites();
          entry.inTransaction?.(kept);
        }
        if (note !== undefined) signedHeadMeta.putSync(SIGNED_HEAD, note);
      }),
    );
  }

  /**
   * Presents the store's last signed head (or, in a store written before signed heads, its latest
   * checkpoint) to the signer, with a consistency proof when the signer asks for one.
   */
  async function resumeSigning(): Promise<ResumeResult> {
    const { size, note } = attestation(signedHead, store);
    if (size > tree.committedSize())
      throw new Error(`the signed head of ${size} records is past the log's ${tree.committedSize()}`);
    const roots = size === 0 ? [] : frontierText(tree.frontierAt(size));
    const head = { ...(note !== undefined ? { note } : {}), size, roots };
    let answer = await signer!.resume(head);
    // The signer may ask for a proof from its last head, then from its published one: at most two.
    for (let asked = 0; asked < 2 && !answer.ok && 'needProofFrom' in answer; asked++) {
      const from = answer.needProofFrom;
      const proof = tree.consistency(from, size).map((h) => Buffer.from(h).toString('base64'));
      answer = await signer!.resume({ ...head, proof, proofFrom: from });
    }
    if (!answer.ok)
      throw new Error(
        `the head signer refuses this store: ${'refused' in answer ? answer.refused : 'no proof'} (a new store ` +
          `needs a signer that has signed nothing: give it a state folder of its own, docs/log.md "Signed heads")`,
      );
    return answer;
  }

  async function append(batch: readonly NewRecord[], inTransaction?: InTransaction): Promise<LogRecord[]> {
    const staged = stage(batch, inTransaction);
    await staged.durable;
    return [...staged.records];
  }

  function* read(from: number, to = head.seq): Iterable<LogRecord> {
    for (const { value } of records.getRange({ start: Math.max(1, from), end: to + 1 })) yield decodeRecord(value);
  }

  function* readRaw(from: number, to = head.seq): Iterable<{ seq: number; bytes: Uint8Array }> {
    for (const { key, value } of records.getRange({ start: Math.max(1, from), end: to + 1 }))
      yield { seq: key, bytes: value };
  }

  return {
    append,
    stage,
    signing: ready,
    resume: () => resumeSigning(),
    ...(signer ? { signer } : {}),
    signedHead: () => signedHead,
    attested: () => attested,
    unattestedTail: () => (head.seq > attested ? { from: attested + 1, to: head.seq } : undefined),
    read,
    readRaw,
    openLentReader,
    head: () => head,
    first: () => cut?.firstSeq ?? 1,
    cut: () => cut,
    missingTail() {
      let last = cut ? cut.firstSeq - 1 : 0;
      for (const key of records.getKeys({ reverse: true, limit: 1 })) last = key;
      return last < head.seq ? { from: last + 1, to: head.seq } : undefined;
    },
    async removePrefix(c, batch) {
      const staged = stage(batch, undefined, c);
      await staged.durable;
      return [...staged.records];
    },
    tree,
    async commit(work) {
      if (failed) throw failed;
      // Batches staged before this work commit first (a read-model checkpoint must not run ahead of its records).
      await pending.catch(() => undefined);
      try {
        await store.root.transaction(work);
        await store.root.flushed;
      } catch (err) {
        fail(err);
      }
    },
    follow(from, onRecord) {
      for (const r of read(from + 1)) onRecord(r);
      followers.add(onRecord);
      return () => followers.delete(onRecord);
    },
    async close() {
      await pending.catch(() => undefined);
      followers.clear();
      await signer?.close();
    },
  };
}

function loadHead(records: Database<Uint8Array, number>, meta: Database<LogHead, string>): LogHead {
  // The head is written in the same transaction as the records; `vigil log verify` checks that it
  // matches the last record, so a tampered tail is reported rather than silently adopted.
  const stored = meta.get('head');
  if (stored) return stored;
  let last: { key: number; value: Uint8Array } | undefined;
  for (const entry of records.getRange({ reverse: true, limit: 1 })) last = entry;
  return last ? { seq: last.key, hash: hashBytes(last.value) } : { seq: 0, hash: GENESIS_HASH };
}
