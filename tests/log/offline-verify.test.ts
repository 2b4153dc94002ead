import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { openLmdbStore } from '../../src/log/lmdb-store.js';
import type { LmdbEventLog } from '../../src/log/lmdb-log.js';
import { signedLog } from '../helpers/signed-log.js';
import { startCheckpointer } from '../../src/log/checkpointer.js';
import { exportLine } from '../../src/log/export-line.js';
import { decodeRecord, encodeRecord } from '../../src/log/record.js';
import { verifyCheckpointConsistency, verifyExport, verifyRecordInclusion } from '../../src/log/offline-verify.js';
import { signNote, verifierOf } from '../../src/log/signed-note.js';
import { formatCheckpoint } from '../../src/log/checkpoint.js';
import { cosignCheckpoint } from '../../src/log/witness.js';
import { COSIGNATURE_V1 } from '../../src/log/signed-note.js';
import { tempDir } from '../helpers/temp.js';

const signer = { name: 'vigil.log/test', seed: new Uint8Array(32).fill(7) };
const key = verifierOf(signer);
const records = (n: number, tag: string) => Array.from({ length: n }, (_, i) => ({ type: 'EventsIngested', at: '2026-11-22T10:00:00.000Z', data: { tag, i, big: 2n ** 60n, blob: new Uint8Array([1, 2, 3]) } }));
const b64 = (a: Uint8Array[]) => a.map((h) => Buffer.from(h).toString('base64'));

function exportOf(log: LmdbEventLog): string[] {
  return [...log.readRaw(1)].map(({ bytes }) => exportLine(decodeRecord(bytes), bytes).trimEnd());
}

/** Rewrites record `seq` of an export line list (its bytes and JSON), keeping its chain link. */
function changed(lines: string[], seq: number): string[] {
  const out = [...lines];
  const r = decodeRecord(Buffer.from((JSON.parse(out[seq - 1]!) as { raw: string }).raw, 'base64'));
  const forged = { ...r, data: { forged: true } };
  out[seq - 1] = exportLine(forged, encodeRecord(forged)).trimEnd();
  return out;
}

describe('offline verification of an export, checkpoints and witnesses', () => {
  it('verifies an honest export and names the first changed, removed, reordered or cut-off record', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    const log = signedLog(store);
    try {
      for (let b = 0; b < 10; b++) await log.append(records(10, `b${b}`));
      const t = await startCheckpointer(store, log, log.signer!, { everyRecords: 1000, everySeconds: 3600, witnesses: [] });
      const note = t.checkpoint()!;
      const lines = exportOf(log);
      assert.deepEqual(verifyExport(lines, note, key), { ok: true, size: 100, root: Buffer.from(log.tree.root()).toString('base64'), beyond: 0 });
      // Longer exports verify their first `size` records.
      await log.append(records(3, 'later'));
      assert.equal(verifyExport(exportOf(log), note, key).ok, true);
      // ... but lines past the checkpoint must still chain on: none is passed over unchecked.
      assert.deepEqual(verifyExport([...exportOf(log), 'not a record'], note, key), { ok: false, badSeq: 104, reason: 'line 104 is not JSON' });
      assert.equal((verifyExport(changed(exportOf(log), 101), note, key) as { badSeq: number }).badSeq, 101);

      const bad = (ls: string[]) => verifyExport(ls, note, key) as { ok: false; badSeq: number; reason: string };
      assert.equal(bad(changed(lines, 40)).badSeq, 40);
      assert.match(bad(changed(lines, 40)).reason, /record 40 .*changed/);
      assert.equal(bad(changed(lines, 100)).badSeq, 100);
      assert.equal(bad(lines.filter((_, i) => i !== 56)).badSeq, 57);
      assert.match(bad(lines.filter((_, i) => i !== 56)).reason, /record 57 is missing/);
      const swapped = [...lines];
      [swapped[10], swapped[11]] = [swapped[11]!, swapped[10]!];
      assert.equal(bad(swapped).badSeq, 11);
      assert.equal(bad(lines.slice(0, 90)).badSeq, 91);
      // The readable JSON must match the bytes: a changed field with the bytes left alone is caught.
      const jsonOnly = [...lines];
      jsonOnly[4] = jsonOnly[4]!.replace('"tag":"b0"', '"tag":"bX"');
      assert.equal(bad(jsonOnly).badSeq, 5);
      // A checkpoint signed by another key, or a changed checkpoint, proves nothing.
      const other = signNote(formatCheckpoint({ origin: signer.name, size: 100, root: log.tree.root(100) }), { name: signer.name, seed: new Uint8Array(32).fill(8) });
      assert.match((verifyExport(lines, other, key) as { reason: string }).reason, /no signature|does not verify/);

      // Inclusion of one record, with the proof the API would give.
      const proof = t.inclusion(40, 100);
      assert.equal(verifyRecordInclusion(lines[39]!, note, key, b64(proof.path)).ok, true);
      assert.equal(verifyRecordInclusion(changed(lines, 40)[39]!, note, key, b64(proof.path)).ok, false);
      await t.stop();
    } finally {
      await log.close(); await store.close(); dir.cleanup();
    }
  });

  it('proves consistency between checkpoints and catches a fork (same size, other root)', async () => {
    const dir = tempDir();
    const store = openLmdbStore(dir.path);
    const log = signedLog(store);
    try {
      await log.append(records(37, 'a'));
      const t = await startCheckpointer(store, log, log.signer!, { everyRecords: 1000, everySeconds: 3600, witnesses: [] });
      const old = t.checkpoint()!;
      await log.append(records(60, 'b'));
      const now = (await t.make())!;
      const proof = b64(t.consistency(37, 97));
      assert.deepEqual(verifyCheckpointConsistency(old, now, key, proof), { ok: true, from: 37, to: 97 });
      // A forked history: the same 37 records but one changed, checkpointed by the same key.
      const forkDir = tempDir();
      const fs = openLmdbStore(forkDir.path);
      const fl = signedLog(fs);
      const forked = records(37, 'a');
      forked[20] = { ...forked[20]!, data: { ...forked[20]!.data, tag: 'forged' } };
      await fl.append(forked);
      const forkNote = signNote(formatCheckpoint({ origin: signer.name, size: 37, root: fl.tree.root() }), signer);
      const fork = verifyCheckpointConsistency(old, forkNote, key, []);
      assert.equal(fork.ok, false);
      assert.match((fork as { reason: string }).reason, /forked/);
      await fl.append(records(60, 'b'));
      const forkLater = signNote(formatCheckpoint({ origin: signer.name, size: 97, root: fl.tree.root() }), signer);
      assert.equal(verifyCheckpointConsistency(old, forkLater, key, b64(fl.tree.consistency(37, 97))).ok, false);

      // A witness cosigns the consistent checkpoint and refuses the fork; the instance serves the cosignature.
      const witness = { name: 'witness.example/w1', seed: new Uint8Array(32).fill(9), type: COSIGNATURE_V1 } as const;
      const first = cosignCheckpoint({ note: old, logKey: key, witness, time: 1_795_400_000 });
      assert.ok(first.ok);
      const second = cosignCheckpoint({ note: now, logKey: key, witness, time: 1_795_400_060, last: first.note, proof });
      assert.ok(second.ok);
      const again = cosignCheckpoint({ note: second.note, logKey: key, witness, time: 1_795_400_120 });
      assert.ok(again.ok);
      assert.equal(again.note, second.note, 'a second cosignature by the same witness is not added');
      const refused = cosignCheckpoint({ note: forkLater, logKey: key, witness, time: 1_795_400_060, last: first.note, proof: b64(fl.tree.consistency(37, 97)) });
      assert.equal(refused.ok, false);
      const t2 = await startCheckpointer(store, log, log.signer!, { everyRecords: 1000, everySeconds: 3600, witnesses: [verifierOf(witness)] });
      const accepted = await t2.cosign(second.note);
      assert.ok(accepted.ok, JSON.stringify(accepted));
      assert.equal(t2.checkpoint(97), second.note);
      assert.equal((await t2.cosign(second.note)).ok, false, 'nothing new to add');
      await t2.stop();
      await t.stop();
      await fl.close(); await fs.close(); forkDir.cleanup();
    } finally {
      await log.close(); await store.close(); dir.cleanup();
    }
  });
});
