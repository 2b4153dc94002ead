import { credentialFingerprint, type Credential } from '../auth/registry.js';
import type { CREDENTIAL_CHANGES } from '../events/credential-events.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import { RecordType, type CredentialsChanged } from '../events/record-types.js';
import type { CredentialsState, CredentialView } from '../projections/credentials.js';
import { accept, type CommandContext, type Decision } from './decision.js';

type Change = CredentialsChanged['changes'][number];

function changeOf(known: CredentialView | undefined, c: Credential): (typeof CREDENTIAL_CHANGES)[number] | undefined {
  if (!known || known.removed) return 'added';
  if (known.disabled !== c.disabled) return c.disabled ? 'disabled' : 'enabled';
  const same =
    known.id === c.id &&
    known.roles.join(',') === c.roles.join(',') &&
    known.expiresAt === c.expiresAt &&
    known.collectorId === c.collectorId;
  return same ? undefined : 'changed';
}

function eventOf(change: Change, ctx: CommandContext, n: number): NormalizedEvent {
  return {
    schemaVersion: 1,
    id: `vigil:credential:${change.fingerprint}:${change.change}:${ctx.now}:${n}`,
    category: 'configuration',
    class: 'credential_change',
    activity: change.change,
    outcome: 'success',
    time: ctx.now,
    ingestedAt: ctx.now,
    severity: change.roles.includes('admin') && change.change === 'added' ? 4 : 2,
    source: { adapter: 'vigil', instance: 'credentials', recordId: `${change.fingerprint}:${change.change}` },
    entityKeys: [`user:${change.id}`, 'service:vigil-api'],
    actor: null,
    attributes: {
      principal: change.id,
      credential: change.fingerprint,
      change: change.change,
      roles: [...change.roles],
      disabled: change.disabled,
      ...(change.expiresAt !== undefined ? { expires_at: change.expiresAt } : {}),
    },
  };
}

/**
 * Decides what a (re)loaded credential registry changed against what the log recorded: each
 * credential added, removed, disabled, enabled or otherwise edited is one change (nothing when the
 * file says what the log knows). The file is the CLI's to write; the log only the service's.
 */
export function decideRecordCredentials(
  known: CredentialsState,
  credentials: readonly Credential[],
  ctx: CommandContext,
): Decision<{ changes: number }> {
  const changes: Change[] = [];
  const present = new Set<string>();
  for (const c of credentials) {
    const fingerprint = credentialFingerprint(c.tokenHash);
    present.add(fingerprint);
    const change = changeOf(known.get(fingerprint), c);
    if (!change) continue;
    changes.push({
      change,
      id: c.id,
      fingerprint,
      roles: [...c.roles],
      disabled: c.disabled,
      ...(c.expiresAt !== undefined ? { expiresAt: c.expiresAt } : {}),
      ...(c.collectorId !== undefined ? { collectorId: c.collectorId } : {}),
      ...(c.createdAt !== undefined ? { createdAt: c.createdAt } : {}),
    });
  }
  for (const k of known.values()) {
    if (k.removed || present.has(k.fingerprint)) continue;
    changes.push({
      change: 'removed',
      id: k.id,
      fingerprint: k.fingerprint,
      roles: [...k.roles],
      disabled: k.disabled,
      ...(k.expiresAt !== undefined ? { expiresAt: k.expiresAt } : {}),
      ...(k.collectorId !== undefined ? { collectorId: k.collectorId } : {}),
      ...(k.createdAt !== undefined ? { createdAt: k.createdAt } : {}),
    });
  }
  if (changes.length === 0) return accept([], { changes: 0 });
  const data: CredentialsChanged = { changes, events: changes.map((c, n) => eventOf(c, ctx, n)) };
  return accept([{ type: RecordType.CredentialsChanged, data }], { changes: changes.length });
}
