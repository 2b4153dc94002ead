import type { Context, Hono } from 'hono';
import * as v from 'valibot';
import { hashToken } from '../../auth/tokens.js';
import { readJsonBody } from '../../http/body.js';
import { HttpError, parseOr400 } from '../../http/errors.js';
import { decideSnapshot } from '../commands/receive-snapshot.js';
import { decideRedeem, enrollmentValid } from '../commands/redeem-enrollment.js';
import type { AuthorityDeps, AuthorityEnv } from '../env.js';
import { parseEd25519Spki } from '../identity-key.js';
import { runCommand } from '../run-command.js';
import { RedeemPayload, SignedEnvelope, SnapshotPayload, VerifyEnrollmentPayload } from '../schemas.js';

/** Parses a signed envelope and its payload text; the payload's `deployment_id` must name the path's deployment. */
async function signedPayload<S extends v.GenericSchema>(
  c: Context,
  limit: number,
  schema: S,
): Promise<{ deploymentId: string; payloadText: string; signature: string; payload: v.InferOutput<S> }> {
  const envelope = parseOr400(SignedEnvelope, await readJsonBody(c, limit), 'signed request');
  let raw: unknown;
  try {
    raw = JSON.parse(envelope.payload);
  } catch {
    throw new HttpError(400, 'invalid signed request', ['payload: expected JSON text']);
  }
  const payload = parseOr400(schema, raw, 'signed request', 'payload') as v.InferOutput<S> & { deployment_id: string };
  const deploymentId = c.req.param('id') ?? '';
  if (payload.deployment_id !== deploymentId)
    throw new HttpError(400, 'invalid signed request', [
      'payload.deployment_id: must equal the deployment in the path',
    ]);
  return { deploymentId, payloadText: envelope.payload, signature: envelope.signature, payload };
}

/** Routes the central instance calls, each signed with the deployment identity key. */
export function deploymentRoutes(app: Hono<AuthorityEnv>, deps: AuthorityDeps): void {
  const limit = deps.config.limits.bodyBytes;
  const actor = (deploymentId: string) => ({ id: deploymentId, authentication: 'deployment-key' });

  app.post('/v1/deployments/:id/snapshots', async (c) => {
    const req = await signedPayload(c, limit, SnapshotPayload);
    const snapshot = req.payload as unknown as Record<string, unknown>;
    const r = await runCommand(
      c,
      deps,
      (m) => decideSnapshot(m, { ...req, now: deps.now().toISOString(), updatedAt: req.payload.updated_at, snapshot }),
      actor(req.deploymentId),
    );
    return c.json(
      { deployment_id: req.deploymentId, accepted: true, status: r.status, enrollment_epoch: r.epoch },
      202,
    );
  });

  app.post('/v1/deployments/:id/enrollments', async (c) => {
    const req = await signedPayload(c, limit, RedeemPayload);
    const key = parseEd25519Spki(req.payload.collector_public_key_spki_pem);
    if (typeof key === 'string')
      throw new HttpError(400, 'invalid signed request', [`payload.collector_public_key_spki_pem: ${key}`]);
    const r = await runCommand(
      c,
      deps,
      (m) =>
        decideRedeem(m, {
          ...req,
          now: deps.now().toISOString(),
          collectorId: req.payload.collector_id,
          tokenHash: hashToken(req.payload.enrollment_token),
          collectorKeyFingerprint: key.fingerprint,
        }),
      actor(req.deploymentId),
    );
    return c.json(
      {
        deployment_id: req.deploymentId,
        collector_id: r.collectorId,
        enrollment_epoch: r.epoch,
        collector_key_fingerprint: key.fingerprint,
      },
      201,
    );
  });

  app.post('/v1/deployments/:id/enrollments/verify', async (c) => {
    const req = await signedPayload(c, limit, VerifyEnrollmentPayload);
    const r = await runCommand(c, deps, (m) =>
      enrollmentValid(
        m,
        req,
        req.payload.collector_id,
        req.payload.collector_key_fingerprint,
        req.payload.enrollment_epoch,
      ),
    );
    return c.json({
      deployment_id: req.deploymentId,
      collector_id: req.payload.collector_id,
      valid: r.valid,
      enrollment_epoch: r.currentEpoch,
    });
  });
}
