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
 * The keeper's state, persisted by whoever runs it: the last signed head's frontier, the size below
 * which nothing may be rewound (the last published checkpoint), and the heads signed above it.
 */
export interface KeeperState {
  readonly size: number;
  /** The frontier's roots, largest first (`frontierText`). */
  readonly roots: readonly string[];
  readonly floor: number;
  /** Heads signed above the floor, oldest first: the only places a restarted writer may resume from behind. */
  readonly recent: readonly KeptHead[];
}

/** What a writer presents when it (re)connects: its store's last signed head and the frontier there. */
export interface PresentedHead {
  /** The signed note of the head (a per-commit head or a checkpoint); absent only for an empty log. */
  readonly note?: string;
  readonly size: number;
  readonly roots: readonly string[];
  /** A consistency proof (base64) from the keeper's size to `size`, when the keeper asked for one. */
  readonly proof?: readonly string[];
}

/** The keeper's answer to a presented head. */
export type ResumeAnswer =
  | {
      readonly ok: true;
      readonly adopted?: true;
      readonly rewound?: { readonly from: KeptHead; readonly to: KeptHead };
    }
  | { readonly ok: false; readonly needProofFrom: number }
  | { readonly ok: false; readonly refused: string };

/** Signed heads remembered above the floor; past it the oldest are forgotten (no resuming there). */
export const RECENT_HEADS = 4096;

/** The state of a keeper that has signed nothing yet. */
export const EMPTY_KEEPER: KeeperState = { size: 0, roots: [], floor: 0, recent: [] };

/** A head keeper over one key: pure apart from its own state, which `state()` hands out to persist. */
export interface HeadKeeper {
  readonly verifier: NoteVerifier;
  current(): KeeperState;
  /** Takes up the writer's store where its last signed head left it, or says why not. */
  resume(p: PresentedHead): ResumeAnswer;
  /** Hashes `leaves` onto the last signed head and signs the result, which must be `size` and `root`. */
  extend(leaves: readonly Uint8Array[], size: number, root: Uint8Array): string;
  /** Marks the head of `size` published (a checkpoint auditors and witnesses may hold): never rewound below. */
  publish(size: number): void;
}

function frontierOf(size: number, roots: readonly string[]): Frontier {
  return size === 0 ? { size: 0, roots: [] } : frontierOfText(size, roots);
}

const b64 = (h: Uint8Array) => Buffer.from(h).toString('base64');

/** A keeper signing with `key`, starting from `initial` (its persisted state; EMPTY_KEEPER the first time). */
export function createHeadKeeper(key: NoteSigner, initial: KeeperState = EMPTY_KEEPER): HeadKeeper {
  const verifier = verifierOf(key);
  const signText = preparedNoteSigner(key);
  let state = initial;
  let frontier = frontierOf(state.size, state.roots);
  // A keeper that has signed nothing adopts the first head presented to it, if its own key signed it.
  let fresh = state.size === 0 && state.recent.length === 0;

  function signedSize(note: string): { size: number; root: string } | string {
    const opened = openNote(note, verifier);
    if (!opened.ok) return `the presented head is not signed by this key: ${opened.error}`;
    const cp = parseCheckpoint(opened.text);
    if (!cp.ok) return `the presented head is not a checkpoint: ${cp.error}`;
    return { size: cp.checkpoint.size, root: b64(cp.checkpoint.root) };
  }

  function take(size: number, roots: readonly string[], recent: readonly KeptHead[]): void {
    state = { size, roots: [...roots], floor: state.floor, recent };
    frontier = frontierOf(size, roots);
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
      // A keeper that has signed nothing takes up a copy that starts past record 1 (at a retention cut) unsigned:
      // it has no signed history that the head could contradict.
      if (p.note !== undefined || (p.size > 0 && !fresh)) {
        const signed = p.note === undefined ? 'the presented head has no signed note' : signedSize(p.note);
        if (typeof signed === 'string') return { ok: false, refused: signed };
        if (signed.size !== p.size || signed.root !== root)
          return { ok: false, refused: `the presented frontier is not the tree of the signed head of ${signed.size}` };
      }
      const mine = b64(frontierRoot(frontier));
      if (p.size === state.size) {
        if (root !== mine)
          return { ok: false, refused: `the store's head of ${p.size} records differs from the one this key signed` };
        fresh = false;
        return { ok: true };
      }
      if (fresh) {
        take(p.size, p.roots, [{ size: p.size, root }]);
        return { ok: true, adopted: true };
      }
      if (p.size > state.size) {
        // Signed by this key, past what it remembers: it lost its latest state; the store proves it only grew.
        if (p.proof === undefined) return { ok: false, needProofFrom: state.size };
        const proof = p.proof.map((h) => new Uint8Array(Buffer.from(h, 'base64')));
        if (!verifyConsistency(state.size, p.size, frontierRoot(frontier), frontierRoot(presented), proof))
          return {
            ok: false,
            refused: `the store's head of ${p.size} does not extend the signed head of ${state.size}`,
          };
        take(p.size, p.roots, [...state.recent, { size: p.size, root }].slice(-RECENT_HEADS));
        return { ok: true };
      }
      // Behind: heads were signed that the store never committed (a crash between signing and commit).
      const at = state.recent.findIndex((h) => h.size === p.size && h.root === root);
      if (p.size < state.floor || at < 0)
        return {
          ok: false,
          refused:
            `the store's head of ${p.size} records is behind the signed head of ${state.size} ` +
            (p.size < state.floor
              ? `and below the published checkpoint of ${state.floor}: signed history is not rewound`
              : 'and is not a head this key signed since the last published checkpoint'),
        };
      const from = { size: state.size, root: mine };
      take(p.size, p.roots, state.recent.slice(0, at + 1));
      return { ok: true, rewound: { from, to: { size: p.size, root } } };
    },
    extend(leaves, size, root) {
      if (leaves.length === 0 || size !== state.size + leaves.length)
        throw new Error(`refusing to sign a head of ${size} records over the signed head of ${state.size}`);
      const next: Frontier = { size: frontier.size, roots: [...frontier.roots] };
      for (const leaf of leaves) appendLeaf(next, leaf);
      const computed = frontierRoot(next);
      if (!Buffer.from(computed).equals(Buffer.from(root)))
        throw new Error(`refusing to sign a head of ${size} records: its root is not the tree of the leaves given`);
      const note = signText(formatCheckpoint({ origin: key.name, size, root: computed }));
      frontier = next;
      const recent = state.recent.length >= RECENT_HEADS ? state.recent.slice(1) : [...state.recent];
      recent.push({ size, root: b64(computed) });
      state = { size, roots: frontierText(next), floor: state.floor, recent };
      fresh = false;
      return note;
    },
    publish(size) {
      if (size > state.size)
        throw new Error(`cannot publish a head of ${size} records: the last signed is ${state.size}`);
      if (size <= state.floor) return;
      state = { ...state, floor: size, recent: state.recent.filter((h) => h.size >= size) };
    },
  };
}
