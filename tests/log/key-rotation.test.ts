import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  checkRotation,
  keyChain,
  makeRotation,
  rotationsTo,
  rotationText,
  ROTATION_HEADER,
} from '../../src/log/key-rotation.js';
import { signatureLine, signNote, verifierKeyString, verifierOf, type NoteSigner } from '../../src/log/signed-note.js';

const origin = 'vigil.log/rotation-test';
const key = (fill: number, name = origin): NoteSigner => ({ name, seed: new Uint8Array(32).fill(fill) });
const [k1, k2, k3, stranger] = [key(1), key(2), key(3), key(9)];
const ids = (keys: ReturnType<typeof keyChain>) => keys.map(verifierKeyString).sort();

describe('key rotation notes', () => {
  it('names the origin and both keys, is signed by the new key and cosigned by the old, and checks', () => {
    const note = makeRotation(k1, k2);
    assert.ok(note.startsWith(`${ROTATION_HEADER}\n${origin}\nold ${verifierKeyString(verifierOf(k1))}\n`));
    assert.match(note, new RegExp(`\nnew ${verifierKeyString(verifierOf(k2)).replace(/\+/g, '\\+')}\n\n— ${origin} `));
    const checked = checkRotation(note);
    assert.ok(checked.ok);
    assert.deepEqual([verifierKeyString(checked.old), verifierKeyString(checked.new)], [verifierOf(k1), verifierOf(k2)].map(verifierKeyString));
    assert.equal(makeRotation(k1, k2), note, 'the same pair gives the same note');
  });

  it('refuses to make a rotation to another origin or to the same key', () => {
    assert.throws(() => makeRotation(k1, key(2, 'vigil.log/other')), /must keep the log's origin/);
    assert.throws(() => makeRotation(k1, k1), /the new key is the old key/);
  });

  it('refuses a note signed by the new key only, by the old key only, or by a stranger in place of either', () => {
    const text = rotationText(origin, verifierOf(k1), verifierOf(k2));
    assert.match(String((checkRotation(signNote(text, k2)) as { error: string }).error), /exactly two signatures/);
    const onlyOld = `${signNote(text, k1)}${signatureLine(text, k1)}`;
    assert.equal(checkRotation(onlyOld).ok, false);
    const strangerCosigns = `${signNote(text, k2)}${signatureLine(text, stranger)}`;
    assert.match(String((checkRotation(strangerCosigns) as { error: string }).error), /old key: no signature/);
    const strangerSigns = `${signNote(text, stranger)}${signatureLine(text, k1)}`;
    assert.match(String((checkRotation(strangerSigns) as { error: string }).error), /new key: no signature/);
  });

  it('never checks once its text or either signature is changed (property)', () => {
    const note = makeRotation(k1, k2);
    const split = note.indexOf('\n\n') + 2;
    const lines = note.slice(split, -1).split('\n');
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: note.length - 2 }),
        fc.integer({ min: 1, max: 0x7e }),
        (at, code) => {
          const ch = String.fromCharCode(code);
          fc.pre(note[at] !== ch);
          const changed = note.slice(0, at) + ch + note.slice(at + 1);
          assert.equal(checkRotation(changed).ok, false, `changed at ${at}`);
        },
      ),
      { numRuns: 1500 },
    );
    // Each signature line replaced by another key's signature of the same text.
    const text = note.slice(0, split - 1);
    for (const i of [0, 1]) {
      const swapped = [...lines];
      swapped[i] = signatureLine(text, key(i === 0 ? 2 : 1, 'vigil.log/other')).trimEnd();
      assert.equal(checkRotation(`${note.slice(0, split)}${swapped.join('\n')}\n`).ok, false);
    }
  });

  it('links keys in both directions, through several rotations, and not through a note that does not check', () => {
    const r12 = makeRotation(k1, k2);
    const r23 = makeRotation(k2, k3);
    const all = ids([k1, k2, k3].map(verifierOf));
    assert.deepEqual(ids(keyChain([verifierOf(k1)], [r23, r12])), all, 'the old key reaches the newest');
    assert.deepEqual(ids(keyChain([verifierOf(k3)], [r12, r23])), all, 'the newest key reaches the oldest');
    const text = rotationText(origin, verifierOf(k1), verifierOf(stranger));
    const forged = `${signNote(text, stranger)}`;
    assert.deepEqual(ids(keyChain([verifierOf(k1)], [forged])), ids([verifierOf(k1)]));
    // A good rotation between keys outside the chain adds nothing.
    assert.deepEqual(ids(keyChain([verifierOf(k1)], [makeRotation(k3, stranger)])), ids([verifierOf(k1)]));
  });

  it('lists the rotations that led to a key, oldest first, without one to a key not installed', () => {
    const r12 = makeRotation(k1, k2);
    const r23 = makeRotation(k2, k3);
    assert.deepEqual(rotationsTo(verifierOf(k3), [r23, r12]), [r12, r23]);
    assert.deepEqual(rotationsTo(verifierOf(k2), [r12, r23]), [r12]);
    assert.deepEqual(rotationsTo(verifierOf(k1), [r12, r23]), []);
  });
});
