import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { formatCheckpoint, parseCheckpoint } from '../../src/log/checkpoint.js';
import { openNote, parseSignerKey, parseVerifierKey, signNote, signerKeyString, verifierKeyString, verifierOf } from '../../src/log/signed-note.js';
import { EMPTY_ROOT } from '../../src/log/merkle.js';

const seed = new Uint8Array(32).map((_, i) => i + 1);
const signer = { name: 'vigil.log/0123abcd', seed };

describe('signed-note and tlog-checkpoint', () => {
  it('verifies the C2SP signed-note example note with its published verifier key', () => {
    // The worked example of c2sp.org/signed-note (also Go's golang.org/x/mod/sumdb/note).
    const key = parseVerifierKey('PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW');
    assert.ok(key);
    const note = 'If you think cryptography is the answer to your problem,\nthen you don\'t know what your problem is.\n\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';
    const opened = openNote(note, key);
    assert.ok(opened.ok, JSON.stringify(opened));
    assert.equal(opened.text, 'If you think cryptography is the answer to your problem,\nthen you don\'t know what your problem is.\n');
    assert.equal(openNote(note.replace('answer', 'Answer'), key).ok, false);
  });

  it('round-trips signer and verifier key strings and refuses a wrong hash', () => {
    const v = verifierKeyString(verifierOf(signer));
    assert.match(v, /^vigil\.log\/0123abcd\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}$/);
    assert.deepEqual(parseVerifierKey(v), verifierOf(signer));
    assert.deepEqual(parseSignerKey(signerKeyString(signer)), signer);
    const [name, hash, key] = [v.slice(0, v.indexOf('+')), v.slice(v.indexOf('+') + 1, v.indexOf('+') + 9), v.slice(v.indexOf('+') + 10)];
    assert.equal(parseVerifierKey(`${name}+${hash === '00000000' ? '00000001' : '00000000'}+${key}`), undefined);
  });

  it('signs a checkpoint that node:crypto alone verifies, with the key hash of signed-note', () => {
    const text = formatCheckpoint({ origin: signer.name, size: 0, root: EMPTY_ROOT });
    assert.equal(text, `${signer.name}\n0\n47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n`);
    const note = signNote(text, signer);
    // Independent of the project's code: parse the verifier key and the line, hash, verify with node:crypto.
    const vkey = verifierKeyString(verifierOf(signer)).split('+');
    const raw = Buffer.from(vkey.slice(2).join('+'), 'base64');
    assert.equal(raw[0], 1);
    const pub = raw.subarray(1);
    const expectHash = createHash('sha256').update(Buffer.concat([Buffer.from(signer.name), Buffer.from([0x0a, 0x01]), pub])).digest().subarray(0, 4);
    assert.equal(expectHash.toString('hex'), vkey[1]);
    const [body, sigs] = [note.slice(0, note.lastIndexOf('\n\n') + 1), note.slice(note.lastIndexOf('\n\n') + 2)];
    const m = /^\u2014 (\S+) (\S+)\n$/u.exec(sigs);
    assert.ok(m);
    assert.equal(m[1], signer.name);
    const blob = Buffer.from(m[2]!, 'base64');
    assert.deepEqual(blob.subarray(0, 4), expectHash);
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]), format: 'der', type: 'spki' });
    assert.equal(cryptoVerify(null, Buffer.from(body), spki, blob.subarray(4)), true);
    assert.equal(cryptoVerify(null, Buffer.from(body.replace('\n0\n', '\n1\n')), spki, blob.subarray(4)), false);
  });

  it('parses a checkpoint and refuses a malformed one', () => {
    const text = formatCheckpoint({ origin: 'o', size: 12, root: EMPTY_ROOT });
    const p = parseCheckpoint(text);
    assert.ok(p.ok);
    assert.equal(p.checkpoint.size, 12);
    assert.equal(parseCheckpoint('o\n012\nAAAA\n').ok, false);
    assert.equal(parseCheckpoint('o\n12\n').ok, false);
  });
});
