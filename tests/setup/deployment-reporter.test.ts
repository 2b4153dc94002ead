import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { SNAPSHOT_SIGNING_DOMAIN, loadIdentityKey, signPayload } from '../../src/services/deployment-reporter.js';
import { SNAPSHOT_DOMAIN, parseEd25519Spki, signedBytes, verifyStrict } from '../../src/setup/identity-key.js';
import { tempDir } from '../helpers/temp.js';

describe('deployment reporter', () => {
  it('signs what the authority verifies strictly, and nothing else', () => {
    assert.equal(SNAPSHOT_SIGNING_DOMAIN, SNAPSHOT_DOMAIN);
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const key = parseEd25519Spki(publicKey.export({ type: 'spki', format: 'pem' }).toString());
    assert.ok(typeof key !== 'string');
    const body = signPayload(SNAPSHOT_SIGNING_DOMAIN, { deployment_id: 'dep_x', updated_at: '2026-11-22T10:00:00Z' }, privateKey);
    assert.equal(verifyStrict(body.signature, signedBytes(SNAPSHOT_DOMAIN, body.payload), key.raw), true);
    assert.equal(verifyStrict(body.signature, signedBytes(SNAPSHOT_DOMAIN, `${body.payload} `), key.raw), false);
    assert.equal(verifyStrict(body.signature, signedBytes('vigil-setup/possession-proof/v1', body.payload), key.raw), false, 'domains do not cross');
    assert.equal(verifyStrict(`${body.signature.slice(0, -2)}A=`, signedBytes(SNAPSHOT_DOMAIN, body.payload), key.raw), false, 'non-canonical base64 is refused');
  });

  it('refuses an identity key file that others can read', () => {
    const d = tempDir();
    mkdirSync(join(d.path, 's'), { mode: 0o700 });
    const path = join(d.path, 's', 'id.key');
    writeFileSync(path, generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    assert.equal(loadIdentityKey(path).asymmetricKeyType, 'ed25519');
    chmodSync(path, 0o644);
    assert.throws(() => loadIdentityKey(path), /readable or writable by group or others/);
    d.cleanup();
  });

  it('refuses small-order and non-Ed25519 identity keys', () => {
    const smallOrder = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.alloc(32)]);
    smallOrder[12] = 1;
    const pem = `-----BEGIN PUBLIC KEY-----\n${smallOrder.toString('base64')}\n-----END PUBLIC KEY-----\n`;
    assert.match(String(parseEd25519Spki(pem)), /small-order/);
    const x25519 = generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' }).toString();
    assert.match(String(parseEd25519Spki(x25519)), /Ed25519/);
  });
});
