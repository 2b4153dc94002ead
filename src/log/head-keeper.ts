/**
 * What holds the log's signing key decides what it signs (docs/log.md, "Signed heads"): it keeps the
 * last head it signed as the frontier of its Merkle tree, and signs a new head only when it has hashed
 * the new leaves onto that frontier itself. No request, however made, gets a signature over a tree
 * that does not extend the last one signed. The writer hands it leaf hashes, never the key.
 */
import { formatCheckpoint, parseCheckpoint } from './checkpoint.js';
import { appendLeaf, frontierRoot, verifyConsistency, type Frontier } from './merkle.js';
import { frontierOfText, frontierText } from './merkle-tree.js';
import { openNote, preparedNoteSigner, verifierOf, type NoteSigner, type NoteVerifier } from './signed-note.js';

/** A head as the keeper remembers it: tree size and base64 root. */
export interface KeptHead {
  readonly size: number;
  readonly root: string;
}

/**
 * The keeper's state: the last signed head's frontier, and the last published head (the floor), which
 * nothing may contradict. Only the floor needs to survive a restart: the keeper persists it when it
 * moves (src/log/head-signer.ts); the frontier is taken up again from the writer's store.
 */
export interface KeeperState {
  readonly size: number;
  /** The frontier's roots, largest first (`frontierText`). */
  readonly roots: readonly string[];
  readonly floor: KeptHead;
}

/** What a writer presents when it (re)connects: its store's last signed head and the frontier there. */
export interface PresentedHead {
  /** The signed note of the head (a per-commit head or a checkpoint); absent for an empty log. */
  readonly note?: string;
  readonly size: number;
  readonly roots: readonly string[];
  /** A consistency proof (base64) from `proofFrom`, the size the keeper asked for (`needProofFrom`), to `size`. */
  readonly proof?: readonly string[];
  readonly proofFrom?: number;
}

/**
 * The keeper's answer to a presented head. `rotations`: the rotation notes that led to the keeper's key,
 * oldest first (src/log/key-rotation.ts), which the writer records in its log when it has not yet.
 */
export type ResumeAnswer =
  | {
      readonly ok: true;
      readonly adopted?: true;
      readonly rewound?: { readonly from: KeptHead; readonly to: KeptHead };
      readonly rotations?: readonly string[];
    }
  | { readonly ok: false; readonly needProofFrom: number }
  | { readonly ok: false; readonly refused: string };

/** The state of a keeper that has signed nothing yet. */
export const EMPTY_KEEPER: KeeperState = { size: 0, roots: [], floor: { size: 0, root: '' } };

/** A head keeper over one key: pure apart from its own state, which `current()` hands out to persist. */
export interface HeadKeeper {
  readonly verifier: NoteVerifier;
  current(): KeeperState;
  /**
   * Takes up the writer's store at its last signed head: one this key signed, proven consistent with the
   * last published head; or says why not.
   */
  resume(p: PresentedHead): ResumeAnswer;
  /** Hashes `leaves` onto the last signed head and signs the result, which must be `size` and `root`. */
  extend(leaves: readonly Uint8Array[], size: number, root: Uint8Array): string;
  /** The head in `note` (one this key signed) was published as a checkpoint: it is never contradicted. */
  publish(note: string): void;
}

function frontierOf(size: number, roots: readonly string[]): Frontier {
  return size === 0 ? { size: 0, roots: [] } : frontierOfText(size, roots);
}

const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');

/**
 * A keeper signing with `key`, starting from `initial` (its persisted state; EMPTY_KEEPER the first time).
 *
 * Within its life it signs only extensions of the last head it signed. When the writer comes back (a
 * restart of either), the keeper takes up the head the writer's store holds if its own key signed it and a
 * consistency proof shows it extends the last published head: heads signed since then and never committed
 * (the writer stopped between a signature and its commit) are given up, and the answer says so, for the
 * log and the signer's journal. A published head is never contradicted.
 */
export function createHeadKeeper(
  key: NoteSigner,
  initial: KeeperState = EMPTY_KEEPER,
  /** Other keys whose heads count as this key's (the keys it replaced: a rotation recorded in the log). */
  trusted: readonly NoteVerifier[] = [],
): HeadKeeper {
  const verifier = verifierOf(key);
  const signText = preparedNoteSigner(key);
  let state = initial;
  let frontier = frontierOf(state.size, state.roots);
  // A keeper that has signed nothing adopts the first head presented to it (it has no history to contradict).
  let fresh = state.size === 0 && state.floor.size === 0;

  function signedHead(note: string): KeptHead | string {
    let opened = openNote(note, verifier);
    for (const other of trusted) if (!opened.ok) opened = openNote(note, other);
    if (!opened.ok) return `the presented head is not signed by this key: ${opened.error}`;
    const cp = parseCheckpoint(opened.text);
    if (!cp.ok) return `the presented head is not a checkpoint: ${cp.error}`;
    return { size: cp.checkpoint.size, root: b64(cp.checkpoint.root) };
  }

  function take(p: PresentedHead, presented: Frontier): void {
    state = { size: p.size, roots: [...p.roots], floor: state.floor };
    frontier = presented;
    fresh = false;
  }

  return {
    verifier,
    current: () => state,
    resume(p) {
      let presented: Frontier;
      try {
        presented = frontierOf(p.size, p.roots);
      } catch (err) {
        return { ok: false, refused: (err as Error).message };
      }
      const root = b64(frontierRoot(presented));
      const mine = { size: state.size, root: b64(frontierRoot(frontier)) };
      if (p.size === mine.size && root === mine.root) {
        fresh = false;
        return { ok: true };
      }
      // A keeper that has signed nothing takes up any store: a new signer, or a copy started at a retention cut.
      if (fresh && (p.note === undefined || typeof signedHead(p.note) !== 'string')) {
        take(p, presented);
        return { ok: true, adopted: true };
      }
      const signed = p.note === undefined ? 'the presented head has no signed note' : signedHead(p.note);
      if (typeof signed === 'string') return { ok: false, refused: signed };
      if (signed.size !== p.size || signed.root !== root)
        return { ok: false, refused: `the presented frontier is not the tree of the signed head of ${signed.size}` };
      const floor = state.floor;
      if (p.size < floor.size)
        return {
          ok: false,
          refused:
            `the store's head of ${p.size} records is behind the published head of ${floor.size}: signed history ` +
            'is not rewound',
        };
      const proof = (p.proof ?? []).map((h) => new Uint8Array(Buffer.from(h, 'base64')));
      const extendsHead = (from: KeptHead) =>
        verifyConsistency(
          from.size,
          p.size,
          new Uint8Array(Buffer.from(from.root, 'base64')),
          frontierRoot(presented),
          proof,
        );
      // Past its last head (one it signed, not one only published to it): a plain continuation when a proof from that
      // head holds. Otherwise the heads it signed since the published one are given up, and the answer says so.
      if (p.size >= mine.size && mine.size >= floor.size) {
        if (p.proofFrom !== mine.size && p.proofFrom !== floor.size) return { ok: false, needProofFrom: mine.size };
        if (p.proofFrom === mine.size && extendsHead(mine)) {
          take(p, presented);
          return { ok: true };
        }
      }
      if (floor.size > 0 && p.proofFrom !== floor.size) return { ok: false, needProofFrom: floor.size };
      if (floor.size > 0 && !extendsHead(floor))
        return {
          ok: false,
          refused: `the store's head of ${p.size} records does not extend the published head of ${floor.size}`,
        };
      // A keeper behind its published head (a JetStream follower's: others signed past it) signed nothing to give up.
      const rewound = mine.size >= floor.size ? { from: mine, to: { size: p.size, root } } : undefined;
      take(p, presented);
      return rewound ? { ok: true, rewound } : { ok: true };
    },
    extend(leaves, size, root) {
      if (state.floor.size > state.size)
        throw new Error(`refusing to sign past the published head of ${state.floor.size}: take the store up first`);
      if (leaves.length === 0 || size !== state.size + leaves.length)
        throw new Error(`refusing to sign a head of ${size} records over the signed head of ${state.size}`);
      const next: Frontier = { size: frontier.size, roots: [...frontier.roots] };
      for (const leaf of leaves) appendLeaf(next, leaf);
      const computed = frontierRoot(next);
      if (!Buffer.from(computed).equals(Buffer.from(root)))
        throw new Error(`refusing to sign a head of ${size} records: its root is not the tree of the leaves given`);
      const note = signText(formatCheckpoint({ origin: key.name, size, root: computed }));
      frontier = next;
      state = { size, roots: frontierText(next), floor: state.floor };
      fresh = false;
      return note;
    },
    publish(note) {
      const head = signedHead(note);
      if (typeof head === 'string') throw new Error(`cannot publish: ${head}`);
      if (head.size <= state.floor.size) return;
      if (head.size === state.size && head.root !== b64(frontierRoot(frontier)))
        throw new Error(`cannot publish a head of ${head.size} records that is not the one signed last`);
      // A head past the last one signed here (a JetStream follower: another node's signer signed it) moves the
      // floor all the same; this keeper signs again only once a writer has taken it up from there (resume).
      state = { ...state, floor: head };
    },
  };
}
