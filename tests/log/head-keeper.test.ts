import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { createHeadKeeper, EMPTY_KEEPER, type HeadKeeper, type KeeperState, type ResumeAnswer } from '../../src/log/head-keeper.js';
import { appendLeaf, consistencyPath, frontierRoot, leafHash, type Frontier } from '../../src/log/merkle.js';
import { frontierText } from '../../src/log/merkle-tree.js';
import { openCheckpoint } from '../../src/log/offline-verify.js';
import { signNote, verifierOf, type NoteSigner } from '../../src/log/signed-note.js';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { openKeeperHost, readRotations, recordRotation, ROTATIONS_FILE } from '../../src/log/head-signer.js';
import { makeRotation, rotationText } from '../../src/log/key-rotation.js';
import { tempDir } from '../helpers/temp.js';

const key: NoteSigner = { name: 'vigil.log/keeper-test', seed: new Uint8Array(32).fill(11) };
const other: NoteSigner = { name: 'vigil.log/keeper-test', seed: new Uint8Array(32).fill(12) };
const leaf = (tag: string, i: number) => leafHash(createHash('sha256').update(`${tag}/${i}`).digest());

/** A writer's tree: the leaves it holds, their frontier, and what a keeper is shown of it. */
class Tree {
  readonly leaves: Uint8Array[] = [];
  readonly f: Frontier = { size: 0, roots: [] };
  add(tag: string, n: number): Uint8Array[] {
    const added = Array.from({ length: n }, (_, i) => leaf(tag, this.leaves.length + i));
    for (const l of added) {
      this.leaves.push(l);
      appendLeaf(this.f, l);
    }
    return added;
  }
  root(): Uint8Array {
    return frontierRoot(this.f);
  }
  proof(from: number): string[] {
    return consistencyPath((l, i) => subtree(this.leaves, l, i), from, this.leaves.length).map((h) =>
      Buffer.from(h).toString('base64'),
    );
  }
  presented(note?: string, proof?: string[], proofFrom?: number) {
    return {
      ...(note ? { note } : {}),
      size: this.f.size,
      roots: frontierText(this.f),
      ...(proof ? { proof, proofFrom: proofFrom ?? 0 } : {}),
    };
  }
  /** Presents the head signed in `note` to `keeper`, with the proofs it asks for, as the log does. */
  resumeAt(keeper: HeadKeeper, note?: string): ResumeAnswer {
    let answer = keeper.resume(this.presented(note));
    for (let i = 0; i < 2 && !answer.ok && 'needProofFrom' in answer; i++) {
      const from = answer.needProofFrom;
      answer = keeper.resume(this.presented(note, this.proof(from), from));
    }
    return answer;
  }
}

function subtree(leaves: readonly Uint8Array[], level: number, index: number): Uint8Array {
  const width = 2 ** level;
  const f: Frontier = { size: 0, roots: [] };
  for (const l of leaves.slice(index * width, index * width + width)) appendLeaf(f, l);
  return frontierRoot(f);
}

describe('the head keeper', () => {
  it('signs a head only over leaves it hashed onto the last head itself', () => {
    const keeper = createHeadKeeper(key);
    const tree = new Tree();
    assert.deepEqual(keeper.resume(tree.presented()), { ok: true });
    const note = keeper.extend(tree.add('a', 5), 5, tree.root());
    const opened = openCheckpoint(note, verifierOf(key));
    assert.ok(opened.ok && opened.checkpoint.size === 5);
    // Given a root that is not the tree of the leaves, or a size that skips records: refused, nothing signed.
    const more = tree.add('b', 3);
    assert.throws(() => keeper.extend(more, 8, new Uint8Array(32)), /its root is not the tree of the leaves given/);
    assert.throws(() => keeper.extend(more, 9, tree.root()), /refusing to sign a head of 9 records over .* 5/);
    assert.equal(keeper.current().size, 5);
    keeper.extend(more, 8, tree.root());
    assert.equal(keeper.current().size, 8);
  });

  it('takes a store up where it left it, adopts only heads its key signed, and refuses a fork', () => {
    const tree = new Tree();
    const first = createHeadKeeper(key);
    first.resume(tree.presented());
    const note = first.extend(tree.add('a', 7), 7, tree.root());
    // A fresh keeper adopts a head its key signed; never one another key signed.
    assert.deepEqual(createHeadKeeper(key).resume(tree.presented(note)), { ok: true, adopted: true });
    const foreign = createHeadKeeper(other);
    assert.match(String((foreign.resume(tree.presented(note)) as { refused: string }).refused), /not signed by this key/);
    // The same size with another tree: refused.
    const fork = new Tree();
    fork.add('x', 7);
    const keeper = createHeadKeeper(key, first.current());
    const forged = keeper.resume(fork.presented(note));
    assert.equal(forged.ok, false);
  });

  it("after a restart takes up the store's head only when a proof shows it extends the published head", () => {
    const tree = new Tree();
    const keeper = createHeadKeeper(key);
    keeper.resume(tree.presented());
    const n10 = keeper.extend(tree.add('a', 10), 10, tree.root());
    keeper.publish(n10);
    const saved: KeeperState = keeper.current();
    assert.deepEqual(saved.floor.size, 10);
    const note = keeper.extend(tree.add('b', 13), 23, tree.root());
    // The signer restarts with what it persisted (the published head); the store holds the signed head of 23.
    const restarted = createHeadKeeper(key, saved);
    assert.deepEqual(restarted.resume(tree.presented(note)), { ok: false, needProofFrom: 10 });
    assert.deepEqual(restarted.resume(tree.presented(note, tree.proof(10), 10)), { ok: true });
    assert.equal(restarted.current().size, 23);
    const wrongProof = createHeadKeeper(key, saved).resume(tree.presented(note, tree.proof(9), 10));
    assert.equal(wrongProof.ok, false);
    // A history that forks below the published head, signed by this key before it was published: refused.
    const fork = new Tree();
    fork.add('x', 12);
    const forkNote = createHeadKeeper(key).extend(fork.leaves, 12, fork.root());
    const refused = createHeadKeeper(key, saved).resume(fork.presented(forkNote, fork.proof(10), 10));
    assert.match(String((refused as { refused: string }).refused), /does not extend the published head of 10/);
  });

  it('gives up heads signed past the store (the writer stopped before their commit) and says which, never a published one', () => {
    const tree = new Tree();
    const keeper = createHeadKeeper(key);
    keeper.resume(tree.presented());
    const n4 = keeper.extend(tree.add('a', 4), 4, tree.root());
    const at4 = tree.presented(n4);
    const t4 = copy(tree);
    keeper.extend(tree.add('b', 4), 8, tree.root());
    // The writer died before committing 5..8: it comes back at 4.
    const answer = t4.resumeAt(keeper, n4);
    assert.ok(answer.ok && answer.rewound);
    assert.deepEqual([answer.rewound.from.size, answer.rewound.to.size], [8, 4]);
    assert.equal(keeper.current().size, 4);
    // Published at 6: from then on nothing goes back before it.
    const back = copy(tree);
    back.leaves.splice(4);
    Object.assign(back.f, { size: 0, roots: [] });
    for (const l of back.leaves) appendLeaf(back.f, l);
    const n6 = keeper.extend(back.add('c', 2), 6, back.root());
    keeper.publish(n6);
    assert.match(String((keeper.resume(at4) as { refused: string }).refused), /behind the published head of 6/);
  });

  it('refuses every dishonest head, follows the writer back only as it says, and never changes a published head (property)', () => {
    const step = fc.oneof(
      fc.record({ op: fc.constant('extend' as const), n: fc.integer({ min: 1, max: 5 }), honest: fc.boolean() }),
      fc.record({ op: fc.constant('resume' as const), back: fc.integer({ min: 0, max: 6 }) }),
      fc.record({ op: fc.constant('publish' as const), back: fc.integer({ min: 0, max: 3 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const keeper = createHeadKeeper(key, EMPTY_KEEPER);
        let published: Tree | undefined;
        const heads: Array<{ note: string; tree: Tree }> = [];
        let tree = new Tree();
        keeper.resume(tree.presented());
        let tag = 0;
        for (const s of steps) {
          if (s.op === 'extend') {
            const next = copy(tree);
            const added = next.add(`t${tag++}`, s.n);
            if (!s.honest) {
              assert.throws(() => keeper.extend(added, next.f.size, leaf('lie', tag)));
              continue;
            }
            const note = keeper.extend(added, next.f.size, next.root());
            const cp = openCheckpoint(note, verifierOf(key));
            assert.ok(cp.ok);
            const r = Buffer.from(cp.checkpoint.root).toString('base64');
            assert.equal(r, Buffer.from(next.root()).toString('base64'), 'the head signed is the tree of the leaves');
            tree = next;
            heads.push({ note, tree: next });
          } else if (s.op === 'resume' && heads.length > 0) {
            const h = heads[Math.max(0, heads.length - 1 - s.back)]!;
            const answer = h.tree.resumeAt(keeper, h.note);
            // Leaving the current branch (going back, or to another branch) is allowed only above the published floor,
            // and then it is said.
            if (answer.ok && !onBranch(tree, h.tree)) assert.ok(answer.rewound, 'a head given up is said');
            if (answer.ok) tree = h.tree;
          } else if (s.op === 'publish') {
            const h = heads.filter((x) => x.tree.f.size <= keeper.current().size).at(-1 - s.back);
            if (h && h.tree.f.size >= keeper.current().floor.size && onBranch(h.tree, tree)) {
              keeper.publish(h.note);
              published = h.tree;
            }
          }
          assert.equal(keeper.current().size, tree.f.size, 'the keeper is where the writer is');
          // Whatever it took up or signed since, it extends the published head.
          if (published) assert.ok(onBranch(published, tree), 'the published head is a prefix of the current tree');
        }
      }),
      { numRuns: 300 },
    );
  });
});

/** Whether `head`'s records are a prefix of `tree`'s. */
function onBranch(head: Tree, tree: Tree): boolean {
  return head.leaves.every((l, i) => tree.leaves[i] !== undefined && Buffer.from(l).equals(Buffer.from(tree.leaves[i]!)));
}

function copy(t: Tree): Tree {
  const c = new Tree();
  c.leaves.push(...t.leaves);
  c.f.size = t.f.size;
  c.f.roots.push(...t.f.roots);
  return c;
}

describe('the head keeper across a key rotation', () => {
  it("takes up a store whose head the old key signed only when a rotation makes the old key trusted", () => {
    const tree = new Tree();
    const first = createHeadKeeper(key);
    first.resume(tree.presented());
    const n5 = first.extend(tree.add('a', 5), 5, tree.root());
    first.publish(n5);
    // What the keeper had persisted: the published head (it writes nothing per signature).
    const saved = first.current();
    const n9 = first.extend(tree.add('b', 4), 9, tree.root());
    // The new key alone: the head is not its own.
    const untrusting = createHeadKeeper(other, saved).resume(tree.presented(n9, tree.proof(5), 5));
    assert.match(String((untrusting as { refused: string }).refused), /not signed by this key/);
    // The new key trusting the old one (a rotation recorded): it asks for the proof from the published head, then signs on.
    const rotated = createHeadKeeper(other, saved, [verifierOf(key)]);
    assert.deepEqual(rotated.resume(tree.presented(n9)), { ok: false, needProofFrom: 5 });
    assert.deepEqual(rotated.resume(tree.presented(n9, tree.proof(5), 5)), { ok: true });
    const next = rotated.extend(tree.add('c', 2), 11, tree.root());
    assert.ok(openCheckpoint(next, verifierOf(other)).ok);
    assert.equal(openCheckpoint(next, verifierOf(key)).ok, false, 'signed by the new key, not the old');
    // Still never a fork of the published head, whoever signed it.
    const fork = new Tree();
    fork.add('x', 9);
    const forkNote = createHeadKeeper(key).extend(fork.leaves, 9, fork.root());
    const forked = createHeadKeeper(other, saved, [verifierOf(key)]).resume(fork.presented(forkNote, fork.proof(5), 5));
    assert.match(String((forked as { refused: string }).refused), /does not extend the published head of 5/);
  });
});

describe("the keeper host's rotations", () => {
  it('trusts the keys its recorded rotations replaced, answers them on resume, and refuses a state folder with a forged one', () => {
    const dir = tempDir();
    try {
      const state = join(dir.path, 'signer');
      const tree = new Tree();
      const before = openKeeperHost(key, state);
      before.resume(tree.presented());
      before.publish(before.extend(tree.add('a', 3), 3, tree.root()));
      // Signed past what the keeper persisted (its published head): taken up again by signature and proof.
      const note = before.extend(tree.add('b', 3), 6, tree.root());
      const proof = tree.proof(3);
      const refused = openKeeperHost(other, state).resume(tree.presented(note, proof, 3));
      assert.match(String((refused as { refused?: string }).refused), /not signed by this key/);
      const rotation = makeRotation(key, other);
      recordRotation(state, rotation);
      recordRotation(state, rotation);
      assert.deepEqual(readRotations(state), [rotation], 'recorded once');
      const after = openKeeperHost(other, state);
      assert.deepEqual(after.resume(tree.presented(note)), { ok: false, needProofFrom: 3 });
      assert.deepEqual(after.resume(tree.presented(note, proof, 3)), { ok: true, rotations: [rotation] });
      // A rotation recorded for a key not installed yet is not answered, nor trusted by the old key's keeper.
      const third = { ...key, seed: new Uint8Array(32).fill(13) };
      recordRotation(state, makeRotation(other, third));
      assert.deepEqual(openKeeperHost(other, state).resume(tree.presented(note, proof, 3)), { ok: true, rotations: [rotation] });
      assert.throws(() => recordRotation(state, signNote(rotationText(key.name, verifierOf(other), verifierOf(third)), third)), /two signatures/);
      appendFileSync(join(state, ROTATIONS_FILE), `${JSON.stringify({ note: signNote(rotationText(key.name, verifierOf(key), verifierOf(third)), third) })}\n`);
      assert.throws(() => openKeeperHost(other, state), /line 3 of .*rotations.jsonl is not a key rotation/);
    } finally {
      dir.cleanup();
    }
  });
});
