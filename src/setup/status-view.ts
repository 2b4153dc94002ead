import { HttpError } from '../http/errors.js';
import type { AuthorityModels } from './models.js';
import { liveSystems, type DeploymentView } from './projections/deployments.js';
import { fleetOf } from './projections/fleet.js';
import type { RecoveryView } from './projections/recovery.js';
import { currentPhase, type SessionView } from './projections/setup-sessions.js';

const SessionIdPattern = /^ss_[A-Za-z0-9_-]{22}$/;

/** A session of the browser's tenant; another tenant's is a 404 exactly like a missing one. */
export function sessionOfTenant(models: AuthorityModels, tenantId: string, id: string): SessionView {
  const view = SessionIdPattern.test(id) ? models.sessions.byId[id] : undefined;
  if (!view || view.tenantId !== tenantId) throw new HttpError(404, `no setup session ${id}`);
  return view;
}

/**
 * The URL of the deployment's console: the instance serves it at `/` of the `instance_url` its
 * last snapshot reported (an http(s) URL, checked when the snapshot was accepted), so the link
 * always ends in a slash and carries no query or fragment.
 */
export function consoleUrl(d: DeploymentView | undefined): string | undefined {
  const reported = d?.snapshot?.instance_url;
  if (typeof reported !== 'string') return undefined;
  let url: URL;
  try {
    url = new URL(reported);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  url.search = '';
  url.hash = '';
  url.username = '';
  url.password = '';
  return url.href;
}

function recoveryStatus(d: DeploymentView, r: RecoveryView): Record<string, unknown> {
  const open = !r.claimedAt;
  return {
    recovery_id: r.id,
    issued_at: r.issuedAt,
    claimed_at: r.claimedAt ?? null,
    revealed_at: r.revealedAt ?? null,
    email: r.notice
      ? { to: r.notice.to, sent_at: r.notice.sentAt }
      : r.noticeFailures > 0
        ? { failures: r.noticeFailures }
        : null,
    action: open
      ? { kind: 'reveal_recovery_token', method: 'POST', path: `/v1/deployments/${d.id}/recovery-token/reveal` }
      : null,
  };
}

/** The deployment part of the browser status (after claim). */
export function deploymentStatus(models: AuthorityModels, d: DeploymentView): Record<string, unknown> {
  const rec = models.recovery;
  const last = d.recoveryIds.at(-1);
  const recovery = last === undefined ? undefined : rec.byId[last];
  const fleet = fleetOf(d);
  return {
    deployment_id: d.id,
    status: d.status,
    status_history: d.statusHistory,
    installation_scope: d.scope,
    identity_key_fingerprint: d.keyFingerprint,
    enrollment_epoch: d.epoch,
    console_credential: d.consoleCredential
      ? { id: d.consoleCredential.id, generation: d.consoleCredential.generation }
      : null,
    // Per collector VM, as of the last snapshot: enrolled in the current epoch, last evidence, silent.
    collectors: fleet.rows
      .filter((r) => r.role === 'collector')
      .map((r) => ({
        collector_id: r.collectorId,
        vm_id: r.vmId,
        in_scope: r.inScope,
        epoch: d.epoch,
        enrolled: r.enrolledAt !== undefined,
        enrolled_at: r.enrolledAt ?? null,
        last_evidence_at: r.lastEvidenceAt ?? null,
        silent: r.silent ?? null,
      })),
    collectors_waiting: fleet.waiting,
    last_heartbeat_at: d.lastHeartbeatAt ?? null,
    snapshot: d.snapshot ?? null,
    systems_reporting_live: liveSystems(d),
    recovery: recovery ? recoveryStatus(d, recovery) : null,
  };
}

/**
 * `GET /v1/setup-sessions/{id}` for the owning browser: status, phases, deployment after claim, dashboard URL after
 * completion.
 */
export function sessionStatus(models: AuthorityModels, view: SessionView): Record<string, unknown> {
  const d = view.deploymentId === undefined ? undefined : models.deployments.byId[view.deploymentId];
  return {
    session_id: view.id,
    kind: view.kind,
    status: view.status,
    created_at: view.createdAt,
    expires_at: view.expiresAt,
    connected_at: view.connectedAt ?? null,
    claimed_at: view.claimedAt ?? null,
    proven_at: view.provenAt ?? null,
    completed_at: view.completedAt ?? null,
    phase: currentPhase(view)?.phase ?? null,
    phases: view.phases.map((p) => ({ phase: p.phase, at: p.at, ...(p.detail ? { detail: p.detail } : {}) })),
    bootstrap_key: view.bootstrapKey
      ? {
          fingerprint: view.bootstrapKey.fingerprint,
          public_key: view.bootstrapKey.publicKeySpkiPem,
          published_at: view.bootstrapKey.publishedAt,
          label: view.bootstrapKey.label ?? null,
        }
      : null,
    ...(d ? { deployment: deploymentStatus(models, d) } : {}),
    ...(view.status === 'completed' ? { dashboard_url: consoleUrl(d) ?? null } : {}),
  };
}
