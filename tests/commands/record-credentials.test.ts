import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Credential } from '../../src/auth/registry.js';
import { decideRecordCredentials } from '../../src/commands/record-credentials.js';
import type { DomainEvent } from '../../src/commands/decision.js';
import { CREDENTIALS, type CredentialsState } from '../../src/projections/credentials.js';
import fc from 'fast-check';
import { memoryModels, spec } from '../helpers/decider-spec.js';

const NOW = '2026-11-22T11:00:00.000Z';
const record = spec((m, credentials: Credential[]) => decideRecordCredentials(m.credentials, credentials, { now: NOW }));

const svc: Credential = { id: 'svc', tokenHash: 'a'.repeat(64), roles: ['viewer'], disabled: false, createdAt: '2026-11-22T09:00:00.000Z' };
const svc2: Credential = { id: 'svc', tokenHash: 'b'.repeat(64), roles: ['viewer'], disabled: false };

/** The (change, fingerprint) pairs of a decided CredentialsChanged. */
const changes = (events: readonly DomainEvent[]) => events.flatMap((e) => (e.data as { changes: Array<{ change: string; fingerprint: string }> }).changes.map((c) => [c.change, c.fingerprint]));

/** The CredentialsChanged the service records for `credentials` against an empty log. */
function recorded(credentials: Credential[]): DomainEvent[] {
  return [...record.given([]).when(credentials).thenAccepts(() => {}).events];
}

describe('decideRecordCredentials', () => {
  it('records every credential of a first load as added, by fingerprint, with a detectable event each and never the hash', () => {
    record.given([]).when([svc]).thenAccepts((events, result) => {
      assert.deepEqual(changes(events), [['added', 'aaaaaaaaaaaa']]);
      assert.deepEqual(result, { changes: 1 });
      const data = events[0]!.data as { changes: Array<Record<string, unknown>>; events: Array<{ class: string; activity: string; attributes: Record<string, unknown> }> };
      assert.deepEqual(data.changes[0], { change: 'added', id: 'svc', fingerprint: 'aaaaaaaaaaaa', roles: ['viewer'], disabled: false, createdAt: '2026-11-22T09:00:00.000Z' });
      assert.deepEqual([data.events[0]!.class, data.events[0]!.activity, data.events[0]!.attributes['credential']], ['credential_change', 'added', 'aaaaaaaaaaaa']);
      assert.equal(JSON.stringify(events).includes('a'.repeat(64)), false);
    });
  });

  it('records nothing when the file says what the log knows', () => {
    record.given(recorded([svc])).when([svc]).then([], { changes: 0 });
  });

  it('records a rotation: the new credential added, the old one disabled, then enabled again', () => {
    record.given(recorded([svc])).when([{ ...svc, disabled: true }, svc2]).thenAccepts((events) => {
      assert.deepEqual(changes(events), [['disabled', 'aaaaaaaaaaaa'], ['added', 'bbbbbbbbbbbb']]);
    });
    record.given(recorded([{ ...svc, disabled: true }])).when([svc]).thenAccepts((events) => assert.deepEqual(changes(events), [['enabled', 'aaaaaaaaaaaa']]));
  });

  it('records a credential edited by hand as changed, and one deleted from the file as removed', () => {
    record.given(recorded([svc, svc2])).when([{ ...svc, roles: ['admin'] }]).thenAccepts((events) => {
      assert.deepEqual(changes(events), [['changed', 'aaaaaaaaaaaa'], ['removed', 'bbbbbbbbbbbb']]);
    });
  });
});

describe('decideRecordCredentials over any sequence of registry files', () => {
  const credentialArb = fc.record({
    n: fc.integer({ min: 0, max: 5 }),
    id: fc.constantFrom('svc', 'ops', 'auditor'),
    roles: fc.subarray(['viewer', 'ingestor', 'admin'] as const, { minLength: 1 }),
    disabled: fc.boolean(),
  }).map((c): Credential => ({ id: c.id, tokenHash: String(c.n).repeat(64), roles: [...c.roles], disabled: c.disabled }));
  /** A registry file: credentials with distinct token hashes. */
  const fileArb = fc.uniqueArray(credentialArb, { selector: (c) => c.tokenHash, maxLength: 6 });

  it('leaves the recorded model saying exactly what the last file says, and records nothing when a file is loaded twice', () => {
    fc.assert(fc.property(fc.array(fileArb, { minLength: 1, maxLength: 8 }), (files) => {
      const models = memoryModels();
      for (const file of files) {
        const decision = decideRecordCredentials(models.credentials, file, { now: NOW });
        assert.ok(decision.ok);
        models.append(decision.events);
        const again = decideRecordCredentials(models.credentials, file, { now: NOW });
        assert.ok(again.ok && again.events.length === 0, 'a file the log already knows records nothing');
      }
      const last = files.at(-1)!;
      const state = models.credentials;
      const live = [...state.values()].filter((c) => !c.removed).map((c) => [c.fingerprint, c.id, c.roles.join(','), c.disabled]).sort();
      assert.deepEqual(live, last.map((c) => [c.tokenHash.slice(0, 12), c.id, c.roles.join(','), c.disabled]).sort());
    }));
  });
});
