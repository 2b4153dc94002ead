import { describe, it } from 'node:test';
import { createHash } from 'node:crypto';
import assert from 'node:assert/strict';
import * as fc from 'fast-check';
import { canonicalize, canonicalizeInOrder, CanonicalizationError } from '../../src/kernel/canonical-json.js';
import { parseStrictJson } from '../../src/kernel/json/strict-json.js';
import { decodeStrictBase64 } from '../../src/kernel/strict-base64.js';
import { PAYLOAD_TYPE, pae } from '../../src/events/collector-protocol/pae.js';
import {
  generateKeyPair, pkcs8PemFromSeed, publicKeyFromSpkiPem, publicKeyOf, publicKeyProblem, seedFromPkcs8Pem, sign, spkiPemFromPublicKey, verify,
} from '../../src/kernel/ed25519.js';
import { openEnvelope, sealEnvelope, signedBytesOf, signedBytesOfEnvelope } from '../../src/events/collector-protocol/open-envelope.js';
import { verifyEnvelope } from '../../src/events/collector-protocol/verify-envelope.js';
import { VECTOR } from './vector.js';

const hex = (h: string) => new Uint8Array(Buffer.from(h, 'hex'));
const utf8 = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const envelopeBytes = (payload: unknown, signature: string) => utf8(JSON.stringify({ algorithm: 'Ed25519', payload, signature }));

/** The eight small-order points of Curve25519 in Edwards form (libsodium's blocklist). */
const SMALL_ORDER = [
  '0100000000000000000000000000000000000000000000000000000000000000',
  'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  '0000000000000000000000000000000000000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000080',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
  'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
  '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85',
];

describe('JCS canonical JSON (RFC 8785)', () => {
  it('sorts keys by UTF-16 code units (RFC 8785 section 3.2.3)', () => {
    const input = JSON.parse('{"\\u20ac":1,"\\r":2,"\\ufb33":3,"1":4,"\\ud83d\\ude00":5,"\\u0080":6,"\\u00f6":7}');
    assert.equal(canonicalize(input), '{"\\r":2,"1":4,"\u0080":6,"\u00f6":7,"\u20ac":1,"\ud83d\ude00":5,"\ufb33":3}');
  });

  it('writes numbers in ECMAScript shortest form (RFC 8785 appendix B)', () => {
    const cases: Array<[string, string]> = [['1e21', '1e+21'], ['1.50', '1.5'], ['-0', '0'], ['1E-7', '1e-7'], ['333333333.33333329', '333333333.3333333'], ['100.0', '100'], ['9007199254740993', '9007199254740992']];
    for (const [text, want] of cases) assert.equal(canonicalize(JSON.parse(text)), want, text);
  });

  it('escapes strings as RFC 8785 does and refuses lone surrogates', () => {
    assert.equal(canonicalize('\u0001\n"\\/é\u2028'), '"\\u0001\\n\\"\\\\/é\u2028"');
    assert.throws(() => canonicalize(JSON.parse('"\\ud800"')), CanonicalizationError);
    assert.throws(() => canonicalize({ [JSON.parse('"\\udfff"')]: 1 }), CanonicalizationError);
  });

  it('reproduces the documented canonical form of the worked example', () => {
    assert.equal(canonicalize(JSON.parse(VECTOR.payloadText)), VECTOR.canonical);
  });
});

describe('strict JSON', () => {
  it('refuses duplicate keys, also when escaped or nested, and accepts repeats in other objects', () => {
    for (const text of ['{"a":1,"a":2}', '{"a":1,"\\u0061":2}', '{"x":{"b":[1,{"c":1,"c":1}]}}', '{"p":{"q":1},"p":2}']) {
      const r = parseStrictJson(utf8(text));
      assert.equal(r.ok, false, text);
      assert.match((r as { error: string }).error, /duplicate key/);
    }
    const text = '{"a":{"a":1},"b":[{"a":2},{"a":3}],"c":"a"}';
    assert.deepEqual(parseStrictJson(utf8(text)), { ok: true, value: { a: { a: 1 }, b: [{ a: 2 }, { a: 3 }], c: 'a' }, keysInOrder: true, canonical: true });
    assert.deepEqual(parseStrictJson(utf8('{"a": 1.50}')), { ok: true, value: { a: 1.5 }, keysInOrder: true, canonical: false });
    assert.deepEqual(parseStrictJson(utf8('{"b":1,"a":2}')), { ok: true, value: { b: 1, a: 2 }, keysInOrder: false, canonical: false });
  });

  it('says whether keys are in canonical order exactly when they are, and the ordered scan judges duplicates as the general one', () => {
    // Objects as lists of members, so that duplicates and any order can be written; an independent oracle judges them.
    type Json = { members: Array<[string, Json]> } | Json[] | string;
    const keys = fc.constantFrom('a', 'b', 'ab', 'B', 'é', '\u0000', '"', '9', '10', '1a', '', '__proto__', '\ud83d\ude00');
    const { json } = fc.letrec<{ json: Json }>((tie) => ({
      json: fc.oneof({ depthSize: 'small', withCrossShrink: true },
        fc.constantFrom('1', '-0', '0', '0.25', '1.50', '1e400', '1e21', '1e+21', '123456789012345', '12345678901234567', ' 7', 'null', 'true', '"x"', '"\\u0061"'),
        fc.array(tie('json'), { maxLength: 3 }),
        fc.record({ members: fc.array(fc.tuple(keys, tie('json')), { maxLength: 4 }) })),
    }));
    const text = (j: Json): string => typeof j === 'string' ? j
      : Array.isArray(j) ? `[${j.map(text).join(',')}]`
      : `{${j.members.map(([k, v]) => `${JSON.stringify(k)}:${text(v)}`).join(',')}}`;
    const every = (j: Json, ok: (members: Array<[string, Json]>) => boolean): boolean => typeof j === 'string' ? true
      : Array.isArray(j) ? j.every((x) => every(x, ok))
      : ok(j.members) && j.members.every(([, v]) => every(v, ok));
    const noDuplicates = (m: Array<[string, Json]>) => new Set(m.map(([k]) => k)).size === m.length;
    const inOrder = (m: Array<[string, Json]>) => m.every(([k], i) => !/^(?:0|[1-9]\d{0,9})$/.test(k) && JSON.stringify(k) === `"${k}"` && (i === 0 || m[i - 1]![0] < k));
    const canonical = (f: () => string) => { try { return f(); } catch (err) { return (err as Error).name; } };
    fc.assert(fc.property(json, (j) => {
      const t = text(j);
      const r = parseStrictJson(utf8(t));
      assert.equal(r.ok, every(j, noDuplicates));
      if (!r.ok) return;
      assert.equal(r.keysInOrder, every(j, inOrder));
      if (r.keysInOrder) assert.equal(canonical(() => canonicalizeInOrder(r.value)), canonical(() => canonicalize(r.value)));
      if (r.canonical) assert.equal(t, canonicalize(r.value));
    }), { numRuns: 3000 });
    // Canonical texts are told as such, whatever they hold (numbers of every form included).
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const text = canonicalize(value);
      const r = parseStrictJson(utf8(text));
      assert.ok(r.ok);
      assert.equal(r.canonical, !/\\|"(?:0|[1-9]\d{0,9})":/.test(text));
    }), { numRuns: 2000 });
  });

  it('refuses invalid UTF-8, trailing data and excessive nesting', () => {
    assert.equal(parseStrictJson(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])).ok, false);
    assert.equal(parseStrictJson(utf8('{"a":1} {"a":2}')).ok, false);
    assert.equal(parseStrictJson(utf8('{"a":1}garbage')).ok, false);
    assert.equal(parseStrictJson(utf8(`${'['.repeat(65)}${']'.repeat(65)}`)).ok, false);
    assert.equal(parseStrictJson(utf8(`${'['.repeat(64)}${']'.repeat(64)}`)).ok, true);
  });

  it('never throws on arbitrary bytes', () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), (b) => { parseStrictJson(b); }), { numRuns: 2000 });
    fc.assert(fc.property(fc.json(), (t) => { assert.equal(parseStrictJson(utf8(t)).ok, true); }), { numRuns: 500 });
  });
});

describe('strict base64', () => {
  it('accepts only canonical padded standard base64', () => {
    const sig = VECTOR.signatureBase64;
    assert.equal(Buffer.from(decodeStrictBase64(sig, 64)!).toString('hex'), VECTOR.signatureHex);
    const variants = [
      sig.replace(/=+$/, ''), // unpadded
      `${sig.slice(0, 10)}\n${sig.slice(10)}`, // whitespace
      sig.replace(/\+/g, '-').replace(/\//g, '_'), // base64url
      `${sig.slice(0, -3)}B==`, // non-zero pad bits (A -> B)
      ` ${sig}`,
    ];
    for (const v of variants) assert.equal(decodeStrictBase64(v, 64), undefined, v);
  });
});

describe('DSSE PAE', () => {
  it('prefixes type and body with their byte lengths', () => {
    assert.equal(Buffer.from(pae('t/x', utf8('héllo'))).toString('utf8'), 'DSSEv1 3 t/x 6 héllo');
    assert.equal(Buffer.from(signedBytesOf(JSON.parse(VECTOR.payloadText))).toString('hex'), VECTOR.signedBytesHex);
    assert.ok(Buffer.from(VECTOR.signedBytesHex, 'hex').toString('utf8').startsWith(`DSSEv1 ${PAYLOAD_TYPE.length} ${PAYLOAD_TYPE} `));
  });
});

describe('Ed25519 keys and strict verification', () => {
  const seed = hex(VECTOR.seedHex);
  const pub = hex(VECTOR.publicKeyHex);
  const signed = hex(VECTOR.signedBytesHex);
  const sig = hex(VECTOR.signatureHex);

  it('signs the worked example to the documented signature, and verifies it', () => {
    assert.equal(Buffer.from(publicKeyOf(seed)).toString('hex'), VECTOR.publicKeyHex);
    assert.equal(Buffer.from(sign(signed, seed)).toString('hex'), VECTOR.signatureHex);
    assert.equal(verify(sig, signed, pub), true);
    assert.equal(spkiPemFromPublicKey(pub), VECTOR.publicKeyPem);
    assert.equal(pkcs8PemFromSeed(seed), VECTOR.privateKeyPem);
    assert.deepEqual(seedFromPkcs8Pem(VECTOR.privateKeyPem), seed);
    assert.deepEqual(publicKeyFromSpkiPem(VECTOR.publicKeyPem), { ok: true, key: pub });
  });

  it('refuses every flipped bit of signature, message and key', () => {
    for (let bit = 0; bit < 512; bit += 7) {
      const s = sig.slice(); s[bit >> 3]! ^= 1 << (bit & 7);
      assert.equal(verify(s, signed, pub), false, `signature bit ${bit}`);
    }
    for (let i = 0; i < signed.length; i += 37) {
      const m = signed.slice(); m[i]! ^= 0x01;
      assert.equal(verify(sig, m, pub), false, `message byte ${i}`);
    }
    const k = pub.slice(); k[5]! ^= 0x10;
    assert.equal(verify(sig, signed, k), false);
  });

  it('refuses another key, 63- and 65-byte signatures and a malleated s (s + L)', () => {
    assert.equal(verify(sig, signed, generateKeyPair().publicKey), false);
    assert.equal(verify(sig.slice(0, 63), signed, pub), false);
    assert.equal(verify(new Uint8Array([...sig, 0]), signed, pub), false);
    const L = (1n << 252n) + 27742317777372353535851937790883648493n;
    let s = 0n;
    for (let i = 31; i >= 0; i--) s = (s << 8n) | BigInt(sig[32 + i]!);
    const big = s + L;
    const malleated = sig.slice();
    for (let i = 0; i < 32; i++) malleated[32 + i] = Number((big >> BigInt(8 * i)) & 0xffn);
    assert.equal(verify(malleated, signed, pub), false);
  });

  it('refuses small-order and non-canonical public keys, at enrollment and at verification', () => {
    for (const h of SMALL_ORDER) {
      const key = hex(h);
      assert.ok(publicKeyProblem(key), h);
      assert.equal(publicKeyFromSpkiPem(spkiPemFromPublicKey(key)).ok, false, h);
      // R = identity, s = 0 satisfies cofactored (ZIP-215) checks under a small-order key.
      assert.equal(verify(hex(`01${'00'.repeat(63)}`), signed, key), false, h);
    }
    assert.ok(publicKeyProblem(hex(`edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f`)), 'y = p is not canonical');
    assert.equal(publicKeyFromSpkiPem('-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VuAyEA11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=\n-----END PUBLIC KEY-----\n').ok, false, 'an X25519 key');
  });
});

describe('openEnvelope', () => {
  const payload = JSON.parse(VECTOR.payloadText) as Record<string, unknown>;

  it('seals payloads in canonical member order, which opens through the ordered path to the same signed bytes', () => {
    const { seed, publicKey } = generateKeyPair();
    const envelope = sealEnvelope({ ...payload, collectedAt: payload.collectedAt, schemaVersion: 1 }, seed);
    const text = JSON.stringify(envelope);
    assert.equal(parseStrictJson(utf8(text)).ok && (parseStrictJson(utf8(text)) as { keysInOrder: boolean }).keysInOrder, true);
    const r = openEnvelope(utf8(text));
    assert.ok(r.ok);
    assert.deepEqual(Buffer.from(signedBytesOfEnvelope(r.envelope)), Buffer.from(signedBytesOf(payload)));
    assert.equal(verify(r.envelope.signature, signedBytesOfEnvelope(r.envelope), publicKey), true);
    assert.equal(verifyEnvelope(r.envelope, publicKey), true);
    assert.equal(verifyEnvelope(r.envelope, generateKeyPair().publicKey), false);
  });

  it('opens the worked example with its digest and signed bytes', () => {
    const r = openEnvelope(envelopeBytes(payload, VECTOR.signatureBase64));
    assert.ok(r.ok);
    assert.equal(Buffer.from(signedBytesOfEnvelope(r.envelope)).toString('hex'), VECTOR.signedBytesHex);
    assert.equal(r.envelope.digest, createHash('sha256').update(Buffer.from(VECTOR.signedBytesHex, 'hex')).digest('hex'));
    assert.match(r.envelope.digest, /^[0-9a-f]{64}$/);
  });

  it('refuses hostile envelopes as malformed without throwing', () => {
    const good = JSON.stringify({ algorithm: 'Ed25519', payload, signature: VECTOR.signatureBase64 });
    const cases: Record<string, string> = {
      'trailing data': `${good} {}`,
      'duplicate key': good.replace('"algorithm":"Ed25519"', '"algorithm":"Ed25519","algorithm":"Ed25519"'),
      '63-byte signature': good.replace(VECTOR.signatureBase64, Buffer.from(VECTOR.signatureHex, 'hex').subarray(0, 63).toString('base64')),
      '65-byte signature': good.replace(VECTOR.signatureBase64, Buffer.concat([Buffer.from(VECTOR.signatureHex, 'hex'), Buffer.from([0])]).toString('base64')),
      'non-canonical base64': good.replace(VECTOR.signatureBase64, VECTOR.signatureBase64.replace(/=+$/, '')),
      'other algorithm': good.replace('"Ed25519"', '"ed25519"'),
      'extra field': good.replace('{"algorithm"', '{"extra":1,"algorithm"'),
      'missing facts': JSON.stringify({ algorithm: 'Ed25519', payload: { ...payload, facts: undefined }, signature: VECTOR.signatureBase64 }),
      'category submitted': JSON.stringify({ algorithm: 'Ed25519', payload: { ...payload, events: [{ ...(payload.events as object[])[0], category: 'identity' }] }, signature: VECTOR.signatureBase64 }),
      'sequence zero': JSON.stringify({ algorithm: 'Ed25519', payload: { ...payload, sequence: 0 }, signature: VECTOR.signatureBase64 }),
    };
    for (const [name, text] of Object.entries(cases)) {
      const r = openEnvelope(utf8(text));
      assert.equal(r.ok, false, name);
      assert.equal((r as { fault: string }).fault, 'malformed', name);
    }
    const lone = good.replace('"rené"', '"\\ud800"');
    assert.equal(openEnvelope(utf8(lone)).ok, false, 'lone surrogate');
  });

  it('never throws on arbitrary mutations of a valid envelope', () => {
    const bytes = envelopeBytes(payload, VECTOR.signatureBase64);
    const sealed = utf8(JSON.stringify(sealEnvelope(payload, generateKeyPair().seed)));
    for (const original of [bytes, sealed]) {
      fc.assert(fc.property(fc.array(fc.tuple(fc.nat(original.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }), (edits) => {
        const b = original.slice();
        for (const [i, v] of edits) b[i] = v;
        const r = openEnvelope(b);
        // Whichever path opened it, the signed bytes are those of the payload as received.
        if (r.ok) assert.deepEqual(Buffer.from(signedBytesOfEnvelope(r.envelope)), Buffer.from(signedBytesOf((JSON.parse(Buffer.from(b).toString('utf8')) as { payload: unknown }).payload)));
      }), { numRuns: 1000 });
    }
  });
});
