import { randomBytes } from 'node:crypto';
import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { generateToken, hashToken } from '../../auth/tokens.js';
import { readJsonBody } from '../../http/body.js';
import { HttpError, parseOr400 } from '../../http/errors.js';
import { AbandonBody, decideAbandonByInstaller } from '../commands/abandon-deployment.js';
import { decideClaim, decideConnect } from '../commands/claim-session.js';
import { decideRecoveryClaim } from '../commands/claim-recovery.js';
import { decideBootstrapKey } from '../commands/publish-bootstrap-key.js';
import { decideProve, remoteVms, sessionAndDeployment } from '../commands/prove-session.js';
import { decidePhase } from '../commands/report-phase.js';
import type { AuthorityDeps, AuthorityEnv } from '../env.js';
import type { EnrollmentGrant } from '../events.js';
import { parseEd25519Spki } from '../identity-key.js';
import { normalizeScope } from '../scope.js';
import { runCommand } from '../run-command.js';
import {
  BootstrapKeyBody,
  ClaimBody,
  ConnectBody,
  PREFIX,
  PhaseBody,
  ProveBody,
  RecoveryClaimBody,
} from '../schemas.js';

const later = (deps: AuthorityDeps, seconds: number) => new Date(deps.now().getTime() + seconds * 1000).toISOString();

/** The session token of an installer request (`Authorization: Bearer lss_...`), hashed; 401 when absent. */
function sessionTokenHash(c: Context): string {
  const m = /^Bearer (lss_[A-Za-z0-9_-]{43})$/.exec(c.req.header('authorization') ?? '');
  if (!m) throw new HttpError(401, 'missing, invalid or expired session token');
  return hashToken(m[1]!);
}

function identityKey(pem: string) {
  const key = parseEd25519Spki(pem);
  if (typeof key === 'string')
    throw new HttpError(400, 'invalid deployment identity', [`deployment_identity.public_key_spki_pem: ${key}`]);
  return key;
}

/** A new session token, its challenge and expiry, for a claim or a recovery claim. */
function newSessionSecrets(deps: AuthorityDeps) {
  const sessionToken = generateToken(PREFIX.session);
  return {
    sessionToken,
    sessionTokenHash: hashToken(sessionToken),
    challenge: randomBytes(32).toString('base64url'),
    sessionTokenExpiresAt: later(deps, deps.config.sessions.sessionTokenTtlSeconds),
  };
}

/** The installer side of the protocol: connect, claim, prove, bootstrap key, phases, progress, recovery claim. */
export function installerRoutes(app: Hono<AuthorityEnv>, deps: AuthorityDeps): void {
  const limit = deps.config.limits.bodyBytes;
  const body = async <S extends v.GenericSchema>(c: Context, schema: S, what: string) =>
    parseOr400(schema, await readJsonBody(c, limit), what);
  const now = () => deps.now().toISOString();

  app.post('/v1/setup-sessions/connect', async (c) => {
    const b = await body(c, ConnectBody, 'connect request');
    const r = await runCommand(c, deps, (m) => decideConnect(m, { tokenHash: hashToken(b.setup_token), now: now() }), {
      id: 'installer',
      authentication: 'setup-token',
    });
    return c.json({ session_id: r.sessionId, status: 'connected', expires_at: r.expiresAt });
  });

  app.post('/v1/setup-sessions/claim', async (c) => {
    const b = await body(c, ClaimBody, 'claim request');
    const key = identityKey(b.deployment_identity.public_key_spki_pem);
    const scope = normalizeScope(b.installation_scope);
    const secrets = newSessionSecrets(deps);
    const deploymentId = `dep_${randomBytes(16).toString('base64url')}`;
    const r = await runCommand(
      c,
      deps,
      (m) => decideClaim(m, { tokenHash: hashToken(b.setup_token), now: now(), key, scope, deploymentId, ...secrets }),
      { id: 'installer', authentication: 'setup-token' },
    );
    return c.json(
      {
        session_id: r.sessionId,
        session_token: secrets.sessionToken,
        challenge: secrets.challenge,
        deployment_id: deploymentId,
        installation_scope: scope,
        session_token_expires_at: secrets.sessionTokenExpiresAt,
      },
      201,
    );
  });

  app.post('/v1/setup-sessions/:id/prove', async (c) => {
    const tokenHash = sessionTokenHash(c);
    const b = await body(c, ProveBody, 'proof');
    const sessionId = c.req.param('id');
    const found = sessionAndDeployment(deps.pipeline.models, sessionId, tokenHash, now());
    if ('ok' in found) throw new HttpError(401, 'missing, invalid or expired session token');
    const ttl = deps.config.sessions.enrollmentTokenTtlSeconds;
    const plain = remoteVms(found.d).map((vmId) => ({
      vmId,
      token: generateToken(PREFIX.enrollment),
      expiresAt: later(deps, ttl),
    }));
    const grants: EnrollmentGrant[] = plain.map((p) => ({
      vmId: p.vmId,
      collectorId: p.vmId,
      tokenHash: hashToken(p.token),
      expiresAt: p.expiresAt,
    }));
    const consoleToken = generateToken();
    const consoleId = `console-${found.d.id.slice(4, 16)}-g${(found.d.consoleCredential?.generation ?? 0) + 1}`;
    const r = await runCommand(
      c,
      deps,
      (m) =>
        decideProve(m, {
          sessionId,
          sessionTokenHash: tokenHash,
          signature: b.signature,
          now: now(),
          consoleCredential: { id: consoleId, tokenHash: hashToken(consoleToken) },
          enrollments: grants,
        }),
      { id: sessionId, authentication: 'session-token' },
    );
    return c.json({
      session_id: sessionId,
      status: 'proven',
      deployment_id: r.deploymentId,
      provisioning: {
        deployment_id: r.deploymentId,
        enrollment_epoch: r.epoch,
        authority_url: deps.publicUrl(),
        central: {
          vm_id: found.d.scope.central_vm_id,
          console_credential: { id: consoleId, token: consoleToken, roles: ['console'], generation: r.generation },
        },
        collectors: plain.map((p) => ({
          vm_id: p.vmId,
          collector_id: p.vmId,
          enrollment_token: p.token,
          expires_at: p.expiresAt,
          enrollment_epoch: r.epoch,
        })),
      },
    });
  });

  app.post('/v1/setup-sessions/:id/bootstrap-key', async (c) => {
    const tokenHash = sessionTokenHash(c);
    const b = await body(c, BootstrapKeyBody, 'bootstrap key');
    const sessionId = c.req.param('id');
    const r = await runCommand(
      c,
      deps,
      (m) =>
        decideBootstrapKey(m, {
          sessionId,
          sessionTokenHash: tokenHash,
          now: now(),
          publicKey: b.public_key,
          ...(b.label ? { label: b.label } : {}),
        }),
      { id: sessionId, authentication: 'session-token' },
    );
    return c.json({ session_id: sessionId, fingerprint: r.fingerprint, published: true });
  });

  app.post('/v1/setup-sessions/:id/phases', async (c) => {
    const tokenHash = sessionTokenHash(c);
    const b = await body(c, PhaseBody, 'phase report');
    const sessionId = c.req.param('id');
    const r = await runCommand(
      c,
      deps,
      (m) =>
        decidePhase(m, {
          sessionId,
          sessionTokenHash: tokenHash,
          now: now(),
          phase: b.phase,
          ...(b.detail ? { detail: b.detail } : {}),
        }),
      { id: sessionId, authentication: 'session-token' },
    );
    return c.json({ session_id: sessionId, phase: r.phase, recorded: r.recorded });
  });

  app.get('/v1/setup-sessions/:id/progress', (c) => {
    const found = sessionAndDeployment(deps.pipeline.models, c.req.param('id'), sessionTokenHash(c), now());
    if ('ok' in found) throw new HttpError(401, 'missing, invalid or expired session token');
    const { view, d } = found;
    return c.json({
      session_id: view.id,
      status: view.status,
      phase: view.phases.at(-1)?.phase ?? null,
      deployment_status: d.status,
      enrollment_epoch: d.epoch,
      first_snapshot_received: d.lastSnapshotSeq !== undefined && d.lastSnapshotSeq > (view.claimSeq ?? 0),
      last_heartbeat_at: d.lastHeartbeatAt ?? null,
    });
  });

  app.post('/v1/setup-sessions/:id/abandon', async (c) => {
    const tokenHash = sessionTokenHash(c);
    const b = await body(c, AbandonBody, 'abandon request');
    const sessionId = c.req.param('id');
    const r = await runCommand(
      c,
      deps,
      (m) => decideAbandonByInstaller(m, { sessionId, sessionTokenHash: tokenHash, now: now(), reason: b.reason }),
      { id: sessionId, authentication: 'session-token' },
    );
    return c.json({ deployment_id: r.deploymentId, status: 'abandoned', previous_status: r.from });
  });

  app.post('/v1/recovery/claim', async (c) => {
    const b = await body(c, RecoveryClaimBody, 'recovery claim');
    const key = identityKey(b.deployment_identity.public_key_spki_pem);
    const scope = b.installation_scope ? normalizeScope(b.installation_scope) : undefined;
    const secrets = newSessionSecrets(deps);
    const sessionId = `ss_${randomBytes(16).toString('base64url')}`;
    const r = await runCommand(
      c,
      deps,
      (m) =>
        decideRecoveryClaim(m, {
          tokenHash: hashToken(b.recovery_token),
          key,
          ...(scope ? { scope } : {}),
          sessionId,
          ...secrets,
        }),
      { id: 'installer', authentication: 'recovery-token' },
    );
    return c.json(
      {
        session_id: sessionId,
        session_token: secrets.sessionToken,
        challenge: secrets.challenge,
        deployment_id: r.deploymentId,
        installation_scope: r.scope,
        enrollment_epoch: r.epoch,
        session_token_expires_at: secrets.sessionTokenExpiresAt,
      },
      201,
    );
  });
}
