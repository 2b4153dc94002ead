import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { interpretReply, logSignedOnly } from '../../src/services/witness/witness-client.js';
import { freshness, cosignedAt } from '../../src/services/witness/freshness.js';
import { backoffMs } from '../../src/services/witness/witness-push.js';
import { answerAddCheckpoint } from '../../src/log/witness-add-checkpoint.js';
import { formatAddCheckpoint, withCosignatures } from '../../src/log/witness-protocol.js';
import { signatureLine, verifierOf } from '../../src/log/signed-note.js';
import { LOG_SIGNER, WITNESS_SIGNER, entries, memoryLog } from '../helpers/witness.js';

const key = verifierOf(WITNESS_SIGNER);
const note = memoryLog(entries(10)).note();
const sent = { old: 4, size: 10, note };
const reply = (status: number, text: string) => ({ status, contentType: status === 409 ? 'text/x.tlog.size' : 'text/plain', text });

/** A real witness's 200 answer to `note` (cosigned at `time`). */
function cosignature(time = 1_795_400_000): string {
  return answerAddCheckpoint(formatAddCheckpoint({ old: 0, proof: [], note }), { logKeys: [verifierOf(LOG_SIGNER)], witness: WITNESS_SIGNER, time, last: () => undefined }).body;
}

describe('what the instance makes of a witness\'s answer', () => {
  it('takes a 200 whose line verifies with the witness key as a cosignature of the checkpoint', () => {
    const r = interpretReply(reply(200, cosignature()), sent, key);
    assert.deepEqual(r, { kind: 'cosigned', note: `${note}${cosignature()}` });
  });

  it('counts a 200 whose cosignature does not verify (another key, or another text) as a refusal', () => {
    const impostor = { ...WITNESS_SIGNER, seed: new Uint8Array(32).fill(8) };
    const forged = signatureLine(note.slice(0, note.indexOf('\n\n') + 1), impostor, 1_795_400_000);
    assert.match((interpretReply(reply(200, forged), sent, key) as { kind: string; reason: string }).reason, /cosignature does not verify/);
    assert.equal(interpretReply(reply(200, forged), sent, key).kind, 'refused');
    const other = memoryLog(entries(10, 'b')).note();
    assert.equal(interpretReply(reply(200, cosignature()), { ...sent, note: other }, key).kind, 'refused');
  });

  it('asks again from the size a 409 names below its own, and counts a size past its own as a refusal', () => {
    assert.deepEqual(interpretReply(reply(409, '7\n'), sent, key), { kind: 'retry', old: 7 });
    assert.deepEqual(interpretReply(reply(409, '10\n'), sent, key), { kind: 'retry', old: 10 }, 'our size, sent with another old');
    assert.deepEqual(interpretReply(reply(409, '12\n'), sent, key), { kind: 'refused', reason: 'it cosigned 12 records of this log, more than the 10 the instance has', witnessSize: 12 });
    assert.equal(interpretReply(reply(409, '10\n'), { ...sent, old: 10 }, key).kind, 'refused', 'the same size with another root');
    assert.equal(interpretReply(reply(409, '4\n'), sent, key).kind, 'failed', 'a 409 naming the size sent contradicts itself');
    assert.equal(interpretReply(reply(409, 'conflict'), sent, key).kind, 'failed');
  });

  it('counts a 422 as a refusal, and 400, 403, 404, 5xx and a malformed 200 as failures to retry', () => {
    assert.equal(interpretReply(reply(422, 'refusing\n'), sent, key).kind, 'refused');
    for (const status of [400, 403, 404, 500, 503]) assert.equal(interpretReply(reply(status, 'no'), sent, key).kind, 'failed', String(status));
    assert.equal(interpretReply(reply(200, '<html>ok</html>\n'), sent, key).kind, 'failed');
  });

  it('sends the checkpoint with its log\'s own signatures only', () => {
    assert.equal(logSignedOnly(withCosignatures(note, [cosignature().trimEnd()])), note);
  });
});

describe('how fresh the witnessed checkpoints are', () => {
  const base = { configured: 1, nowMs: Date.parse('2026-12-07T12:00:00Z'), maxAgeMs: 900_000 };
  it('is off with no witness, ok within the maximum age, stale past it', () => {
    assert.equal(freshness({ ...base, configured: 0, lastCosignedMs: undefined, logStartedMs: undefined }).status, 'off');
    assert.deepEqual(freshness({ ...base, lastCosignedMs: base.nowMs - 60_000, logStartedMs: 0 }), { status: 'ok', maxAgeSeconds: 900, lastCosignedAt: '2026-12-07T11:59:00.000Z', ageSeconds: 60 });
    assert.deepEqual(freshness({ ...base, lastCosignedMs: base.nowMs - 901_000, logStartedMs: 0 }), { status: 'stale', maxAgeSeconds: 900, lastCosignedAt: '2026-12-07T11:44:59.000Z', ageSeconds: 901 });
    assert.equal(freshness({ ...base, lastCosignedMs: base.nowMs + 5000, logStartedMs: 0 }).ageSeconds, 0, 'a witness clock ahead is no negative age');
  });

  it('with no cosignature ever, is stale only once the log is older than the maximum age', () => {
    assert.equal(freshness({ ...base, lastCosignedMs: undefined, logStartedMs: base.nowMs - 60_000 }).status, 'ok');
    assert.equal(freshness({ ...base, lastCosignedMs: undefined, logStartedMs: base.nowMs - 3_600_000 }).status, 'stale');
    assert.equal(freshness({ ...base, lastCosignedMs: undefined, logStartedMs: undefined }).status, 'ok', 'an empty log');
  });

  it('reads the time a stored cosignature/v1 line of a configured witness states', () => {
    const cosigned = `${note}${cosignature(1_795_400_123)}`;
    assert.equal(cosignedAt(cosigned, [key]), 1_795_400_123);
    assert.equal(cosignedAt(cosigned, [verifierOf({ ...WITNESS_SIGNER, name: 'other/w' })]), undefined);
    assert.equal(cosignedAt(note, [key]), undefined);
  });

  it('backs off by doubling the interval, up to ten minutes (or the interval when longer)', () => {
    assert.deepEqual([1, 2, 3, 4, 5, 12].map((n) => backoffMs(60_000, n)), [60_000, 120_000, 240_000, 480_000, 600_000, 600_000]);
    assert.equal(backoffMs(3_600_000, 3), 3_600_000);
  });
});
