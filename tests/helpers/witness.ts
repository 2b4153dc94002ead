import { join } from 'node:path';
import { formatCheckpoint } from '../../src/log/checkpoint.js';
import { consistencyPath, leafHash, nodeHash, rootAt } from '../../src/log/merkle.js';
import { COSIGNATURE_V1, signNote, type NoteSigner } from '../../src/log/signed-note.js';

/**
 * Where a store's instance keeps the key that signs its checkpoints. The one place tests name it: the key is moving
 * out of the store folder, and a test that copies it (a forked instance) follows it here.
 */
export function instanceKeyFile(storePath: string): string {
  return join(storePath, 'log-signing.key');
}

/** A log key and a witness key for tests (fixed seeds). */
export const LOG_SIGNER: NoteSigner = { name: 'vigil.log/test-witness', seed: new Uint8Array(32).fill(3) };
export const WITNESS_SIGNER: NoteSigner = { name: 'witness.test/w1', seed: new Uint8Array(32).fill(5), type: COSIGNATURE_V1 };

/** An in-memory log of string entries: its signed checkpoints and consistency proofs, as a Vigil instance makes them. */
export function memoryLog(entries: readonly string[], signer: NoteSigner = LOG_SIGNER) {
  const leaves = entries.map((e) => leafHash(new TextEncoder().encode(e)));
  const node = (level: number, index: number): Uint8Array =>
    level === 0 ? leaves[index]! : nodeHash(node(level - 1, 2 * index), node(level - 1, 2 * index + 1));
  return {
    note: (size = entries.length) => signNote(formatCheckpoint({ origin: signer.name, size, root: rootAt(node, size) }), signer),
    proof: (from: number, to = entries.length) => consistencyPath(node, from, to).map((h) => Buffer.from(h).toString('base64')),
  };
}

/** `n` entries named with `tag`: two logs with different tags fork at their first entry. */
export const entries = (n: number, tag = 'a') => Array.from({ length: n }, (_, i) => `${tag}-${i}`);
