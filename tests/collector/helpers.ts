import { generateKeyPair, sign, spkiPemFromPublicKey } from '../../src/kernel/ed25519.js';
import { signedBytesOf } from '../../src/events/collector-protocol/open-envelope.js';
import { encodeBase64 } from '../../src/kernel/strict-base64.js';
import type { TestInstance } from '../helpers/instance.js';

/** A key pair for tests. */
export interface TestKey { readonly seed: Uint8Array; readonly publicKey: Uint8Array }

/** A payload for `collectorId` at `sequence` with `n` events whose ids start with `prefix`. */
export function makePayload(collectorId: string, sequence: number, n = 1, prefix = `${collectorId}-s${sequence}`): Record<string, unknown> {
  return {
    schemaVersion: 1, collectorId, sequence, collectedAt: '2026-11-22T10:00:00Z',
    facts: [
      { fact: 'entity', key: `host:${collectorId}`, kind: 'host', attributes: { os: 'Debian GNU/Linux 12' } },
      { fact: 'relationship', from: `host:${collectorId}`, to: 'service:sshd', type: 'runs' },
    ],
    events: Array.from({ length: n }, (_, i) => ({
      schemaVersion: 1, id: `${prefix}-e${i}`, class: 'authentication', activity: 'logon',
      time: '2026-11-22T09:59:00Z', ingestedAt: '2026-11-22T10:00:00Z',
      source: { adapter: 'linux-journal', instance: collectorId, recordId: `${prefix}-r${i}` },
      entityKeys: [`host:${collectorId}`, 'user:alice'], actor: { user: 'alice' },
      attributes: { outcome: i % 2 === 0 ? 'failure' : 'success', message: `Failed password for alice (${i})` },
    })),
  };
}

/** The envelope text of a payload signed with `key`. */
export function envelopeText(payload: unknown, key: TestKey): string {
  return JSON.stringify({ algorithm: 'Ed25519', payload, signature: encodeBase64(sign(signedBytesOf(payload), key.seed)) });
}

/** Issues an enrollment token as admin and returns it. */
export async function issueToken(t: TestInstance, collectorId: string, expiresIn?: string): Promise<string> {
  const res = await t.request('/api/v1/collector/enrollment-tokens', { method: 'POST', token: t.tokens.admin, body: JSON.stringify({ collectorId, ...(expiresIn ? { expiresIn } : {}) }) });
  if (res.status !== 201) throw new Error(`token: ${res.status} ${await res.text()}`);
  return (await res.json() as { token: string }).token;
}

/** Posts an enrollment. */
export function postEnrollment(t: TestInstance, collectorId: string, enrollmentToken: string, publicKey: Uint8Array): Promise<Response> {
  return t.request('/api/v1/collector/enrollments', { method: 'POST', body: JSON.stringify({ collectorId, enrollmentToken, publicKey: spkiPemFromPublicKey(publicKey) }) });
}

/** Enrolls a collector with a fresh key and returns the key. */
export async function enrollCollector(t: TestInstance, collectorId: string): Promise<TestKey> {
  const key = generateKeyPair();
  const res = await postEnrollment(t, collectorId, await issueToken(t, collectorId), key.publicKey);
  if (res.status !== 201) throw new Error(`enroll: ${res.status} ${await res.text()}`);
  return { seed: key.seed, publicKey: key.publicKey };
}

/** Posts envelope text as a collector (the `collector` role token unless another is given). */
export function submit(t: TestInstance, text: string, token = t.tokens.collector): Promise<Response> {
  return t.request('/api/v1/collector/submissions', { method: 'POST', token, body: text });
}

/** The data of every log record of a type. */
export function recordsOf<D>(t: TestInstance, type: string): D[] {
  const out: D[] = [];
  for (const r of t.inst.log.read(1)) if (r.type === type) out.push(r.data as D);
  return out;
}
