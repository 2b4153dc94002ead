import * as v from 'valibot';
import { exhaustive } from '../events/read.js';
import type { CredentialsChanged } from '../events/record-types.js';
import { instanceProjection } from './types.js';

/** One credential as the log knows it: what the registry file said, and when it was last used. */
export interface CredentialView {
  id: string;
  fingerprint: string;
  roles: string[];
  disabled: boolean;
  removed: boolean;
  expiresAt?: string;
  collectorId?: string;
  createdAt?: string;
  /** When the service first recorded it. */
  recordedAt: string;
  lastUsedAt?: string;
  lastUsedFrom?: string;
  /** Its recorded changes, oldest first (the last 20). */
  history: Array<{ at: string; change: string }>;
}

/** The credentials the log has recorded, by fingerprint. */
export type CredentialsState = Map<string, CredentialView>;

/** A CredentialView as `GET /api/v1/credentials` answers it (published in docs/openapi.json). */
export const CredentialViewSchema = v.strictObject({
  id: v.string(),
  fingerprint: v.string(),
  roles: v.array(v.string()),
  disabled: v.boolean(),
  removed: v.boolean(),
  expiresAt: v.optional(v.string()),
  collectorId: v.optional(v.string()),
  createdAt: v.optional(v.string()),
  recordedAt: v.string(),
  lastUsedAt: v.optional(v.string()),
  lastUsedFrom: v.optional(v.string()),
  history: v.array(v.strictObject({ at: v.string(), change: v.string() })),
});

/** The name of the credentials model. */
export const CREDENTIALS = 'credentials';

const HISTORY_KEPT = 20;

function applyChanges(s: CredentialsState, at: string, data: CredentialsChanged): void {
  for (const c of data.changes) {
    const known = s.get(c.fingerprint);
    const view: CredentialView = {
      id: c.id,
      fingerprint: c.fingerprint,
      roles: [...c.roles],
      disabled: c.disabled,
      removed: c.change === 'removed',
      ...(c.expiresAt !== undefined ? { expiresAt: c.expiresAt } : {}),
      ...(c.collectorId !== undefined ? { collectorId: c.collectorId } : {}),
      ...(c.createdAt !== undefined ? { createdAt: c.createdAt } : {}),
      recordedAt: known?.recordedAt ?? at,
      ...(known?.lastUsedAt !== undefined ? { lastUsedAt: known.lastUsedAt } : {}),
      ...(known?.lastUsedFrom !== undefined ? { lastUsedFrom: known.lastUsedFrom } : {}),
      history: [...(known?.history ?? []), { at, change: c.change }].slice(-HISTORY_KEPT),
    };
    s.set(c.fingerprint, view);
  }
}

/**
 * The credential registry as recorded in the log (CredentialsChanged) with each credential's last
 * use (the `credential` fingerprint of API audit records): what `GET /api/v1/credentials` shows and
 * what the service compares a reloaded registry file with.
 */
export const credentialsProjection = instanceProjection({
  name: CREDENTIALS,
  version: 1,
  folds: ['CredentialsChanged', 'ApiRequestAudited'],
  initial: (): CredentialsState => new Map(),
  evolve(s, record) {
    switch (record.type) {
      case 'CredentialsChanged':
        applyChanges(s, record.at, record.data);
        return s;
      case 'ApiRequestAudited': {
        const used = record.data.credential === undefined ? undefined : s.get(record.data.credential);
        if (used) {
          used.lastUsedAt = record.at;
          used.lastUsedFrom = record.data.sourceAddress;
        }
        return s;
      }
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => [...s.entries()],
  restore: (data) => new Map(data as Array<[string, CredentialView]>),
});
