import { join } from 'node:path';
import { hashToken } from '../../auth/tokens.js';
import { keyFingerprint, spkiPemFromPublicKey } from '../../kernel/ed25519.js';
import { createPendingKey, loadKey, promotePendingKey } from './keys.js';
import { resequence } from './resequence.js';
import { Spool } from './spool.js';
import { ensurePrivateDir, readJsonFile, writeDurable } from './state-files.js';

/** The server refused the enrollment: its status and ErrorResponse, for a message that says what to do. */
export class EnrollmentRefused extends Error {
  override readonly name = 'EnrollmentRefused';
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** What enrollment recorded locally (`enrollment.json`). */
export interface EnrollmentState {
  readonly collectorId: string;
  readonly server: string;
  readonly epoch: number;
  readonly keyFingerprint: string;
  readonly enrolledAt: string;
  /** SHA-256 hex of the enrollment token used (absent in states written before it was recorded). */
  readonly tokenSha256?: string;
}

/**
 * Enrolls this host: generates a new key (kept pending, 0600), registers it with the single-use
 * token, then makes it current. A new epoch restarts the sequence at 1, so anything still spooled
 * is renumbered from 1 and signed with the new key.
 */
export async function enroll(o: {
  server: string;
  collectorId: string;
  enrollmentToken: string;
  stateDir: string;
  now: () => Date;
}): Promise<EnrollmentState> {
  ensurePrivateDir(o.stateDir);
  const key = createPendingKey(o.stateDir);
  const res = await fetch(new URL('/api/v1/collector/enrollments', o.server), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      collectorId: o.collectorId,
      enrollmentToken: o.enrollmentToken,
      publicKey: spkiPemFromPublicKey(key.publicKey),
    }),
    signal: AbortSignal.timeout(60_000),
  });
  const body = (await res.json().catch(() => ({}))) as { epoch?: number; error?: string; issues?: string[] };
  if (res.status !== 201 || typeof body.epoch !== 'number') {
    throw new EnrollmentRefused(
      `enrollment refused (HTTP ${res.status}): ` +
        `${body.error ?? 'no error message'}${body.issues ? `; ${body.issues.join('; ')}` : ''}`,
      res.status,
    );
  }
  promotePendingKey(o.stateDir);
  const state: EnrollmentState = {
    collectorId: o.collectorId,
    server: o.server,
    epoch: body.epoch,
    keyFingerprint: keyFingerprint(key.publicKey),
    enrolledAt: o.now().toISOString(),
    tokenSha256: hashToken(o.enrollmentToken),
  };
  writeDurable(join(o.stateDir, 'enrollment.json'), JSON.stringify(state, null, 2));
  resequence(new Spool(o.stateDir).recover(), 1, loadKey(o.stateDir));
  return state;
}

/** The local enrollment record, or undefined before the first enrollment. */
export function readEnrollment(stateDir: string): EnrollmentState | undefined {
  return readJsonFile<EnrollmentState>(join(stateDir, 'enrollment.json'));
}

/**
 * Whether `token` still has to be redeemed here: no enrollment yet, one made with another token
 * (the installer delivered a new epoch's token), or one made against another server.
 */
export function needsEnrollment(stateDir: string, server: string, token: string): boolean {
  const current = readEnrollment(stateDir);
  return current?.tokenSha256 !== hashToken(token) || current.server !== server;
}
