import { exhaustive } from '../../events/read.js';
import type { AuthorityRecord } from '../../events/union.js';
import { authorityProjection, type FoldedRecord } from '../../projections/types.js';
import type { SetupSessionProven } from '../events.js';
import type { InstallationScope } from '../scope.js';

/** Deployment states: `central_missing` and `recovered` come from spec 3.2; the others are ours. */
export type DeploymentStatus = 'provisioning' | 'reporting' | 'central_missing' | 'recovered' | 'abandoned';

/** One enrollment grant of the current or an earlier epoch. */
export interface EnrollmentView {
  collectorId: string;
  vmId: string;
  epoch: number;
  tokenHash: string;
  expiresAt: string;
  redeemed?: { at: string; keyFingerprint: string };
}

/** One deployment: its identity, approved scope, heartbeat and enrollment epoch. */
export interface DeploymentView {
  id: string;
  tenantId: string;
  userId: string;
  /** The setup session that created it and the latest (recovery) session. */
  firstSessionId: string;
  sessionId: string;
  status: DeploymentStatus;
  statusHistory: Array<{ status: DeploymentStatus; at: string }>;
  publicKeySpkiPem: string;
  keyFingerprint: string;
  /** Fingerprints of identity keys replaced by recoveries: their signatures are refused. */
  retiredKeys: string[];
  scope: InstallationScope;
  epoch: number;
  /** When the current epoch's provisioning was released (its proof): an enrollment since belongs to it. */
  epochStartedAt?: string;
  consoleCredential?: { id: string; generation: number; fingerprint: string };
  /** Enrollment grants of the current epoch, by collector id. */
  enrollments: Record<string, EnrollmentView>;
  lastHeartbeatAt?: string;
  lastSnapshotSeq?: number;
  snapshot?: Record<string, unknown>;
  recoveryIds: string[];
  /** Who gave it up, when and why (the status is then `abandoned` for good). */
  abandoned?: { at: string; principal: string; via: string; reason: string };
}

/** The deployments read model. */
export interface DeploymentsState {
  byId: Record<string, DeploymentView>;
}

function moveTo(d: DeploymentView, status: DeploymentStatus, at: string): void {
  // Abandoned is final: a late snapshot or claim is kept as a fact but does not bring the deployment back.
  if (d.status === status || d.status === 'abandoned') return;
  d.status = status;
  d.statusHistory.push({ status, at });
}

function onProven(d: DeploymentView, data: SetupSessionProven, at: string): void {
  d.epoch = data.epoch;
  d.epochStartedAt = at;
  d.consoleCredential = {
    id: data.consoleCredential.id,
    generation: data.consoleCredential.generation,
    fingerprint: data.consoleCredential.tokenHash.slice(0, 12),
  };
  d.enrollments = {};
  for (const g of data.enrollments)
    d.enrollments[g.collectorId] = {
      collectorId: g.collectorId,
      vmId: g.vmId,
      epoch: data.epoch,
      tokenHash: g.tokenHash,
      expiresAt: g.expiresAt,
    };
}

/** The records that change the deployments read model. */
const DEPLOYMENT_RECORDS = [
  'SetupSessionClaimed',
  'SetupSessionProven',
  'DeploymentSnapshotReceived',
  'DeploymentCentralMissing',
  'RecoveryTokenIssued',
  'RecoveryClaimed',
  'CollectorEnrollmentRedeemed',
  'DeploymentAbandoned',
] as const;

function evolveOne(s: DeploymentsState, r: FoldedRecord<AuthorityRecord, (typeof DEPLOYMENT_RECORDS)[number]>): void {
  switch (r.type) {
    case 'SetupSessionClaimed': {
      const d = r.data;
      s.byId[d.deploymentId] = {
        id: d.deploymentId,
        tenantId: d.tenantId,
        userId: d.userId,
        firstSessionId: d.sessionId,
        sessionId: d.sessionId,
        status: 'provisioning',
        statusHistory: [{ status: 'provisioning', at: r.at }],
        publicKeySpkiPem: d.publicKeySpkiPem,
        keyFingerprint: d.keyFingerprint,
        retiredKeys: [],
        scope: d.scope,
        epoch: 0,
        enrollments: {},
        recoveryIds: [],
      };
      return;
    }
    case 'SetupSessionProven': {
      const d = s.byId[r.data.deploymentId];
      if (d) onProven(d, r.data, r.at);
      return;
    }
    case 'DeploymentSnapshotReceived': {
      const data = r.data;
      const d = s.byId[data.deploymentId];
      if (!d) return;
      d.lastHeartbeatAt = data.updatedAt;
      d.lastSnapshotSeq = r.seq;
      d.snapshot = data.snapshot;
      moveTo(d, 'reporting', r.at);
      return;
    }
    case 'DeploymentCentralMissing': {
      const d = s.byId[r.data.deploymentId];
      if (d) moveTo(d, 'central_missing', r.at);
      return;
    }
    case 'RecoveryTokenIssued': {
      s.byId[r.data.deploymentId]?.recoveryIds.push(r.data.recoveryId);
      return;
    }
    case 'RecoveryClaimed': {
      const data = r.data;
      const d = s.byId[data.deploymentId];
      if (!d) return;
      d.retiredKeys.push(d.keyFingerprint);
      Object.assign(d, {
        publicKeySpkiPem: data.publicKeySpkiPem,
        keyFingerprint: data.keyFingerprint,
        sessionId: data.sessionId,
        epoch: data.epoch,
        enrollments: {},
      });
      moveTo(d, 'recovered', r.at);
      return;
    }
    case 'CollectorEnrollmentRedeemed': {
      const data = r.data;
      const e = s.byId[data.deploymentId]?.enrollments[data.collectorId];
      if (e && e.epoch === data.epoch) e.redeemed = { at: r.at, keyFingerprint: data.collectorKeyFingerprint };
      return;
    }
    case 'DeploymentAbandoned': {
      const d = s.byId[r.data.deploymentId];
      if (!d) return;
      const { principal, via, reason } = r.data;
      moveTo(d, 'abandoned', r.at);
      d.abandoned = { at: r.at, principal, via, reason };
      return;
    }
    default:
      return exhaustive(r, undefined);
  }
}

/** Folds deployment records into the deployments read model. */
export const deploymentsProjection = authorityProjection({
  name: 'deployments',
  // 2: a deployment keeps when its current epoch began; 3: and whether it was abandoned.
  version: 3,
  folds: DEPLOYMENT_RECORDS,
  initial: (): DeploymentsState => ({ byId: {} }),
  evolve(s, r) {
    evolveOne(s, r);
    return s;
  },
});

/** How many systems the last snapshot reports as sending live data (0 before any). */
export function liveSystems(d: DeploymentView): number {
  const n = d.snapshot?.systems_reporting_live;
  return typeof n === 'number' ? n : 0;
}
