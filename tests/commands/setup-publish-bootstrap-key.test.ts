import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { decideBootstrapKey, type BootstrapKeyCommand } from '../../src/setup/commands/publish-bootstrap-key.js';
import { event } from '../../src/setup/events.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { HASH, claimed, identity, provisioned } from '../helpers/setup-fixtures.js';

const id = identity();
const SSH = 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl fleet@host';
const sshFingerprint = `SHA256:${createHash('sha256').update(Buffer.from(SSH.split(' ')[1]!, 'base64')).digest('base64').replace(/=+$/, '')}`;
const publish = spec(decideBootstrapKey, AUTHORITY);
const cmd = (over: Partial<BootstrapKeyCommand> = {}): BootstrapKeyCommand => ({ sessionId: 'ses_1', sessionTokenHash: HASH.session, now: '2026-11-22T10:30:00.000Z', publicKey: SSH, ...over });

describe('decideBootstrapKey', () => {
  it('publishes an OpenSSH ed25519 key with the fingerprint ssh-keygen prints, and its label', () => {
    publish.given(provisioned(id)).when(cmd({ label: 'fleet' }))
      .then([event('BootstrapKeyPublished', { sessionId: 'ses_1', publicKeySpkiPem: SSH, fingerprint: sshFingerprint, label: 'fleet' })], { fingerprint: sshFingerprint });
  });

  it('publishes an Ed25519 SPKI PEM with the sha256 hex of its DER', () => {
    const fleet = identity();
    publish.given(provisioned(id)).when(cmd({ publicKey: fleet.pub.pem }))
      .then([event('BootstrapKeyPublished', { sessionId: 'ses_1', publicKeySpkiPem: fleet.pub.pem.trim(), fingerprint: `sha256:${fleet.pub.fingerprint}` })]);
  });

  it('refuses a key before the possession proof', () => {
    publish.given(claimed(id)).when(cmd()).thenRejects('conflict', /the session is claimed; the bootstrap key is published after the proof/);
  });

  it('refuses a key that is neither an OpenSSH ed25519 line nor an Ed25519 SPKI PEM, naming the field', () => {
    const r = publish.given(provisioned(id)).when(cmd({ publicKey: 'ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQ fleet' })).thenRejects('invalid', /invalid bootstrap key/);
    assert.match(r.issues?.[0] ?? '', /^public_key: /);
  });
});
