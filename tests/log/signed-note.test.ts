import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPublicKey, verify as cryptoVerify } from 'node:crypto';
import { formatCheckpoint, parseCheckpoint } from '../../src/log/checkpoint.js';
import { COSIGNATURE_V1, cosignatureTime, openNote, parseNote, parseSignerKey, parseVerifierKey, signNote, signatureLine, signerKeyString, verifierKeyString, verifierOf } from '../../src/log/signed-note.js';
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

  it('writes C2SP tlog-cosignature/v1 lines that node:crypto alone verifies, and opens them by key type', () => {
    const witness = { name: 'witness.example/w1', seed: new Uint8Array(32).fill(7), type: COSIGNATURE_V1 } as const;
    const note = signNote(formatCheckpoint({ origin: signer.name, size: 5, root: EMPTY_ROOT }), signer);
    const body = note.slice(0, note.lastIndexOf('\n\n') + 1);
    const cosigned = `${note}${signatureLine(body, witness, 1_679_315_147)}`;
    // Independent of the project's code: the vkey has type 0x04, the key ID hashes 0x04, and the
    // signature is u64 time || Ed25519 over "cosignature/v1\ntime <t>\n" || the checkpoint body.
    const vkey = verifierKeyString(verifierOf(witness));
    const [name, hash, keyB64] = [vkey.slice(0, vkey.indexOf('+')), vkey.split('+')[1]!, vkey.slice(vkey.indexOf('+', vkey.indexOf('+') + 1) + 1)];
    const key = Buffer.from(keyB64, 'base64');
    assert.equal(key[0], 0x04);
    const pub = key.subarray(1);
    assert.equal(hash, createHash('sha256').update(`${name}\n`).update(Buffer.of(0x04)).update(pub).digest().subarray(0, 4).toString('hex'));
    const line = cosigned.trimEnd().split('\n').at(-1)!;
    const blob = Buffer.from(line.split(' ').at(-1)!, 'base64');
    assert.equal(blob.subarray(0, 4).toString('hex'), hash);
    assert.equal(blob.readBigUInt64BE(4), 1_679_315_147n);
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), pub]), format: 'der', type: 'spki' });
    assert.equal(cryptoVerify(null, Buffer.from(`cosignature/v1\ntime 1679315147\n${body}`), spki, blob.subarray(12)), true);
    // The project's verifier agrees, and refuses the line under the plain type or a changed time.
    const v = parseVerifierKey(vkey)!;
    assert.equal(v.type, COSIGNATURE_V1);
    assert.ok(openNote(cosigned, v).ok);
    assert.equal(openNote(cosigned, { ...v, type: undefined }).ok, false);
    const parsed = parseNote(cosigned);
    assert.ok(parsed.ok);
    assert.equal(cosignatureTime(parsed.signatures[1]!.signature), 1_679_315_147);
    const shifted = Buffer.from(blob); shifted.writeBigUInt64BE(1_679_315_148n, 4);
    assert.equal(openNote(cosigned.replace(blob.toString('base64'), shifted.toString('base64')), v).ok, false);
    assert.deepEqual(parseSignerKey(signerKeyString(witness)), witness);
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
