import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { answerAddCheckpoint, type WitnessContext } from '../../src/log/witness-add-checkpoint.js';
import { formatAddCheckpoint, parseAddCheckpoint, parseSizeAnswer, cosignatureLines, withCosignatures } from '../../src/log/witness-protocol.js';
import { openNote, verifierOf, cosignatureTime, parseNote } from '../../src/log/signed-note.js';
import { LOG_SIGNER, WITNESS_SIGNER, entries, memoryLog } from '../helpers/witness.js';

const logKey = verifierOf(LOG_SIGNER);
const witnessKey = verifierOf(WITNESS_SIGNER);

/** A witness over an in-memory state, as `vigil log witness serve` decides (persisting `save` before answering). */
function witness(time = 1_795_400_000) {
  const state = new Map<string, string>();
  const ctx = (): WitnessContext => ({ logKeys: [logKey], witness: WITNESS_SIGNER, time, last: (o) => state.get(o) });
  return {
    state,
    add(old: number, proof: readonly string[], note: string) {
      const a = answerAddCheckpoint(formatAddCheckpoint({ old, proof, note }), ctx());
      if (a.save) state.set(a.save.origin, a.save.note);
      return a;
    },
  };
}

describe('the add-checkpoint request body (C2SP tlog-witness)', () => {
  it('is `old <size>`, one proof hash a line, a blank line, then the checkpoint note, and parses back', () => {
    const log = memoryLog(entries(7));
    const proof = log.proof(3);
    const body = formatAddCheckpoint({ old: 3, proof, note: log.note() });
    assert.equal(body, `old 3\n${proof.join('\n')}\n\n${log.note()}`);
    assert.deepEqual(parseAddCheckpoint(body), { ok: true, request: { old: 3, proof, note: log.note() } });
    assert.equal(formatAddCheckpoint({ old: 0, proof: [], note: log.note() }), `old 0\n\n${log.note()}`);
  });

  it('refuses a body that is not one', () => {
    const note = memoryLog(entries(2)).note();
    const bad = (body: string) => (parseAddCheckpoint(body) as { ok: false; error: string }).error;
    assert.match(bad(`old 01\n\n${note}`), /old <size>/);
    assert.match(bad(`new 1\n\n${note}`), /old <size>/);
    assert.match(bad(`old 1\nnot-a-hash\n\n${note}`), /proof line 1/);
    assert.match(bad(`old 0\n${'A'.repeat(43)}=\n\n${note}`), /empty when old is 0/);
    assert.match(bad(`old 1\n${`${'A'.repeat(43)}=\n`.repeat(64)}\n${note}`), /more than 63/);
    assert.match(bad('old 1\n'), /no blank line/);
    assert.match(bad('old 1\n\n'), /no checkpoint note/);
  });

  it('reads a 409 answer as one size and a newline, and a 200 answer as signature lines', () => {
    assert.equal(parseSizeAnswer('42\n'), 42);
    assert.equal(parseSizeAnswer('42'), undefined);
    assert.equal(parseSizeAnswer('042\n'), undefined);
    assert.equal(parseSizeAnswer('-1\n'), undefined);
    assert.deepEqual(cosignatureLines('\u2014 w/1 AAAA\n\u2014 w/2 BBBB\n'), ['\u2014 w/1 AAAA', '\u2014 w/2 BBBB']);
    assert.equal(cosignatureLines('\u2014 w/1 AAAA'), undefined, 'a line must end in a newline');
    assert.equal(cosignatureLines('<html>\n'), undefined);
    assert.equal(cosignatureLines(''), undefined);
  });
});

describe('a witness deciding add-checkpoint', () => {
  it('cosigns a first checkpoint from old 0, then one that extends it with a consistency proof, and keeps the last', () => {
    const w = witness();
    const log = memoryLog(entries(20));
    const first = w.add(0, [], log.note(5));
    assert.equal(first.status, 200, first.body);
    const lines = cosignatureLines(first.body)!;
    assert.equal(lines.length, 1);
    const cosigned = openNote(withCosignatures(log.note(5), lines), witnessKey);
    assert.ok(cosigned.ok, 'the answer is a cosignature/v1 of the checkpoint by the witness key');
    assert.equal(cosignatureTime(cosigned.signatures.at(-1)!.signature), 1_795_400_000);
    const second = w.add(5, log.proof(5, 20), log.note(20));
    assert.equal(second.status, 200, second.body);
    assert.ok(w.state.get(LOG_SIGNER.name)!.startsWith(log.note(20)), 'the state is the latest cosigned checkpoint');
  });

  it('answers 409 with its size (text/x.tlog.size) when old is not the size it last cosigned', () => {
    const w = witness();
    const log = memoryLog(entries(20));
    assert.equal(w.add(0, [], log.note(8)).status, 200);
    const stale = w.add(0, [], log.note(20));
    assert.equal(stale.status, 409);
    assert.equal(stale.contentType, 'text/x.tlog.size');
    assert.equal(parseSizeAnswer(stale.body), 8);
    assert.equal(w.add(3, log.proof(3, 20), log.note(20)).status, 409);
    // The client learns the size and proves from it.
    assert.equal(w.add(8, log.proof(8, 20), log.note(20)).status, 200);
  });

  it('answers 422 to a forked tree: a proof from its size that does not hold', () => {
    const w = witness();
    const honest = memoryLog(entries(10));
    const forked = memoryLog([...entries(6), ...entries(10, 'forged')]);
    assert.equal(w.add(0, [], honest.note(8)).status, 200);
    const refused = w.add(8, forked.proof(8, 16), forked.note(16));
    assert.equal(refused.status, 422, refused.body);
    assert.match(refused.body, /not consistent/);
    assert.ok(w.state.get(LOG_SIGNER.name)!.startsWith(honest.note(8)), 'a refusal leaves the state as it was');
    // Even a proof of the honest log is refused for the forked checkpoint.
    assert.equal(w.add(8, honest.proof(8, 10), forked.note(10)).status, 422);
  });

  it('answers 409 to the same size with another root, and cosigns the same checkpoint again', () => {
    const w = witness();
    const honest = memoryLog(entries(8));
    assert.equal(w.add(0, [], honest.note()).status, 200);
    const same = w.add(8, [], honest.note());
    assert.equal(same.status, 200, 'the same checkpoint is cosigned again (a fresh cosignature)');
    const other = w.add(8, [], memoryLog(entries(8, 'b')).note());
    assert.equal(other.status, 409);
    assert.equal(parseSizeAnswer(other.body), 8);
  });

  it('returns a fresh line for a checkpoint that already carries its own cosignature', () => {
    const w = witness();
    const log = memoryLog(entries(4));
    const first = w.add(0, [], log.note());
    const stored = withCosignatures(log.note(), cosignatureLines(first.body)!);
    const again = w.add(4, [], stored);
    assert.equal(again.status, 200);
    assert.equal(cosignatureLines(again.body)!.length, 1);
    assert.equal((parseNote(w.state.get(LOG_SIGNER.name)!) as { signatures: unknown[] }).signatures.length, 2, 'one log and one witness line kept');
  });

  it('answers 404 to an unknown origin, 403 to a bad signature and 400 to an old past the checkpoint', () => {
    const w = witness();
    const log = memoryLog(entries(4));
    const stranger = memoryLog(entries(4), { name: 'other.log/x', seed: new Uint8Array(32).fill(1) });
    assert.equal(w.add(0, [], stranger.note()).status, 404);
    const impostor = memoryLog(entries(4), { name: LOG_SIGNER.name, seed: new Uint8Array(32).fill(9) });
    assert.equal(w.add(0, [], impostor.note()).status, 403);
    assert.equal(w.add(5, [], log.note()).status, 400);
    assert.equal(answerAddCheckpoint('garbage', { logKeys: [logKey], witness: WITNESS_SIGNER, time: 1, last: () => undefined }).status, 400);
    assert.equal(w.state.size, 0, 'nothing cosigned');
  });
});

describe('a witness of a log whose key was rotated', () => {
  it('given both keys of the origin, cosigns the new key\'s checkpoint over the old key\'s; given the old key alone, refuses it', () => {
    const rotated = { ...LOG_SIGNER, seed: new Uint8Array(32).fill(4) };
    const [before, after] = [memoryLog(entries(20)), memoryLog(entries(20), rotated)];
    const states = new Map<string, string>();
    const add = (keys: WitnessContext['logKeys'], old: number, proof: readonly string[], note: string) => {
      const a = answerAddCheckpoint(formatAddCheckpoint({ old, proof, note }), {
        logKeys: keys,
        witness: WITNESS_SIGNER,
        time: 1_795_400_000,
        last: (o) => states.get(o),
      });
      if (a.save) states.set(a.save.origin, a.save.note);
      return a;
    };
    assert.equal(add([logKey], 0, [], before.note(5)).status, 200);
    assert.equal(add([logKey], 5, after.proof(5, 20), after.note(20)).status, 403, 'the new key is not the log key it knows');
    const both = [logKey, verifierOf(rotated)];
    const cosigned = add(both, 5, after.proof(5, 20), after.note(20));
    assert.equal(cosigned.status, 200, cosigned.body);
    // Still no fork, whichever key signs it.
    const fork = memoryLog(entries(20, 'x'), rotated);
    assert.equal(add(both, 20, fork.proof(20, 20), fork.note(20)).status, 409);
  });
});
