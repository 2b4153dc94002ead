import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { decideSnapshot, type SnapshotCommand } from '../../src/setup/commands/receive-snapshot.js';
import { event } from '../../src/setup/events.js';
import { SNAPSHOT_DOMAIN } from '../../src/setup/identity-key.js';
import { AUTHORITY, spec } from '../helpers/decider-spec.js';
import { centralMissing, claimed, identity, provisioned, recoveryClaimed, signedSnapshot, snapshotReceived, type Identity } from '../helpers/setup-fixtures.js';

const id = identity();
const NOW = '2026-11-22T10:30:00.000Z';
const snapshot = spec(decideSnapshot, AUTHORITY);
const cmd = (signer: Identity, updatedAt: string, over: Partial<SnapshotCommand> = {}): SnapshotCommand =>
  ({ deploymentId: 'dep_1', ...signedSnapshot(signer.key, updatedAt, SNAPSHOT_DOMAIN), now: NOW, updatedAt, snapshot: { systems_reporting_live: 3 }, ...over });

describe('decideSnapshot', () => {
  it('accepts a snapshot signed by the current identity key: the heartbeat of a reporting deployment', () => {
    snapshot.given(provisioned(id)).when(cmd(id, '2026-11-22T10:29:00.000Z'))
      .then([event('DeploymentSnapshotReceived', { deploymentId: 'dep_1', keyFingerprint: id.pub.fingerprint, updatedAt: '2026-11-22T10:29:00.000Z', snapshot: { systems_reporting_live: 3 } })], { status: 'reporting', epoch: 1 });
  });

  it('refuses a signature by another key like an unknown deployment', () => {
    snapshot.given(provisioned(id)).when(cmd(identity(), '2026-11-22T10:29:00.000Z')).thenRejects('unauthenticated', /unknown deployment, retired identity key or bad signature/);
  });

  it('refuses a signature under another domain (an enrollment signature replayed as a snapshot)', () => {
    const other = signedSnapshot(id.key, '2026-11-22T10:29:00.000Z', 'vigil-setup/collector-enrollment/v1');
    snapshot.given(provisioned(id)).when(cmd(id, '2026-11-22T10:29:00.000Z', other)).thenRejects('unauthenticated');
  });

  it('refuses the identity key a recovery retired', () => {
    const recovered = [...provisioned(id), snapshotReceived(id, '2026-11-22T10:05:00.000Z'), ...centralMissing('2026-11-22T10:05:00.000Z'), recoveryClaimed(identity())];
    snapshot.given(recovered).when(cmd(id, '2026-11-22T10:29:00.000Z')).thenRejects('unauthenticated');
  });

  it('refuses snapshots before provisioning was released', () => {
    snapshot.given(claimed(id)).when(cmd(id, '2026-11-22T10:29:00.000Z')).thenRejects('conflict', /provisioning has not been released/);
  });

  it('accepts a stamp up to five minutes ahead of the authority clock, and refuses one further ahead', () => {
    snapshot.given(provisioned(id)).when(cmd(id, '2026-11-22T10:35:00.000Z')).thenAccepts(() => undefined);
    snapshot.given(provisioned(id)).when(cmd(id, '2026-11-22T10:35:00.001Z')).thenRejects('invalid', /ahead of the authority clock by more than 5 minutes/);
  });

  it('refuses a heartbeat that does not move forward (a replayed or stale snapshot), naming the last one', () => {
    const r = snapshot.given([...provisioned(id), snapshotReceived(id, '2026-11-22T10:20:00.000Z')]).when(cmd(id, '2026-11-22T10:20:00.000Z'))
      .thenRejects('conflict', /must be later than the last snapshot/);
    assert.deepEqual(r.details, { last_updated_at: '2026-11-22T10:20:00.000Z' });
  });
});
