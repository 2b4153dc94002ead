import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import { signedLog } from '../helpers/signed-log.js';
import { startCheckpointer } from '../../src/log/checkpointer.js';
import { verifyTree } from '../../src/log/verify-tree.js';
import { signNote, verifierOf } from '../../src/log/signed-note.js';
import { formatCheckpoint } from '../../src/log/checkpoint.js';
import { tempDir } from '../helpers/temp.js';

const signer = { name: 'vigil.log/test', seed: new Uint8Array(32).fill(7) };
const policy = { everyRecords: 1_000_000, everySeconds: 3600, witnesses: [] };
const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'EventsIngested', at: '2026-11-22T10:00:00.000Z', data: { tag, i } }));

describe('the checkpointer after a retention cut', () => {
  it('starts when its latest checkpoint is of a size a cut removed (a kill after the cut, before the next checkpoint), and still refuses a changed log', async () => {
    const dir = tempDir();
    let store = openLmdbStore(dir.path);
    let log = signedLog(store);
    try {
      await log.append(records(600, 'a'));
      const first = await startCheckpointer(store, log, log.signer!, policy);
      await first.stop();
      assert.equal(first.checkpoint()?.split('\n')[1], '600', 'the latest checkpoint is of 600 records');
      // Records 1..768 go (three whole segments of 256); the root at 600 needs the bytes of 513..600.
      await log.append(records(300, 'b'));
      const cut = { firstSeq: 769, prevHash: [...log.read(769, 769)][0]!.prev, treeRoot: Buffer.from(log.tree.root(768)).toString('base64') };
      // As retention does, the head is published to the signer before the cut; the process dies before the checkpoint
      // is stored, and no checkpoint is made after the cut.
      await log.signer!.publish(log.signedHead()!);
      await log.removePrefix!(cut, records(1, 'cut'));
      await store.close();
      store = openLmdbStore(dir.path);
      log = signedLog(store);
      assert.throws(() => log.tree.root(600), /record 513 is missing from the log/, 'the root at 600 needs removed records');

      const again = await startCheckpointer(store, log, log.signer!, policy);
      assert.equal(again.checkpoint()?.split('\n')[1], String(log.head().seq), 'a checkpoint is made at the head');
      await again.stop();
      const tree = verifyTree(store, log, verifierOf(signer));
      assert.deepEqual(tree.ok && [tree.checkpoints, tree.checkpointsBeforeCut], [1, 1], JSON.stringify(tree));

      // A checkpoint from the cut on is still held to the tree: a log changed after it is refused.
      await log.append(records(10, 'c'));
      const head = log.head().seq;
      const checked = await startCheckpointer(store, log, log.signer!, policy);
      await checked.stop();
      assert.equal(checked.checkpoint()?.split('\n')[1], String(head));
      await store.close();
      store = openLmdbStore(dir.path);
      const checkpoints = store.db<string, number>('checkpoints', { keyEncoding: 'uint32' });
      // Signed by the instance's own key, of the right size, with another root.
      const forged = signNote(formatCheckpoint({ origin: signer.name, size: head, root: new Uint8Array(32) }), signer);
      await store.root.transaction(() => checkpoints.putSync(head, forged));
      log = signedLog(store);
      await assert.rejects(startCheckpointer(store, log, log.signer!, policy), /no longer matches its checkpoint/);
    } finally {
      await store.close();
      dir.cleanup();
    }
  });
});
