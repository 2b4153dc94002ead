import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { formatAddCheckpoint, parseAddCheckpoint, parseSizeAnswer, formatSizeAnswer } from '../../src/log/witness-protocol.js';
import { answerAddCheckpoint } from '../../src/log/witness-add-checkpoint.js';
import { interpretReply } from '../../src/services/witness/witness-client.js';
import { verifierOf } from '../../src/log/signed-note.js';
import { LOG_SIGNER, WITNESS_SIGNER, entries, memoryLog } from '../helpers/witness.js';

const hash = fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('base64'));
const log = memoryLog(entries(40));
const cosigned = answerAddCheckpoint(formatAddCheckpoint({ old: 0, proof: [], note: log.note(12) }), { logKeys: [verifierOf(LOG_SIGNER)], witness: WITNESS_SIGNER, time: 1, last: () => undefined });
const state = `${log.note(12)}${cosigned.body}`;

/** Text that looks like the protocol more often than random text would. */
const protocolish = fc.array(fc.oneof(fc.constantFrom('old ', '0', '12', '\n', '\n\n', '\u2014 ', LOG_SIGNER.name, '=', '+', '/'), fc.string({ maxLength: 8 }), hash), { maxLength: 30 }).map((parts) => parts.join(''));

describe('the tlog-witness wire forms (property)', () => {
  it('parse back what they format, for any size and proof', () => {
    fc.assert(fc.property(fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.array(hash, { maxLength: 63 }), (old, proof) => {
      const request = { old, proof: old === 0 ? [] : proof, note: log.note(7) };
      assert.deepEqual(parseAddCheckpoint(formatAddCheckpoint(request)), { ok: true, request });
      assert.equal(parseSizeAnswer(formatSizeAnswer(old)), old);
    }));
  });

  it('never throw on arbitrary bodies, and a witness answers them with a protocol status, cosigning nothing it should not', () => {
    fc.assert(fc.property(fc.oneof(fc.string({ maxLength: 400 }), protocolish, protocolish.map((s) => `${s}\n\n${log.note(20)}`)), (body) => {
      parseAddCheckpoint(body);
      parseSizeAnswer(body);
      const a = answerAddCheckpoint(body, { logKeys: [verifierOf(LOG_SIGNER)], witness: WITNESS_SIGNER, time: 2, last: () => state });
      assert.ok([200, 400, 403, 404, 409, 422].includes(a.status), String(a.status));
      // From the state of 12, only a proof from 12 to 20 could be cosigned, and no random body holds one.
      assert.notEqual(a.status, 200);
      const r = interpretReply({ status: 409, contentType: 'text/x.tlog.size', text: body }, { old: 3, size: 20, note: log.note(20) }, verifierOf(WITNESS_SIGNER));
      assert.ok(['retry', 'refused', 'failed'].includes(r.kind));
    }), { numRuns: 500 });
  });
});
