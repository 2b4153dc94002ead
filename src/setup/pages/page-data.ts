import * as v from 'valibot';
import type { AuthorityModels } from '../models.js';
import { liveSystems, type DeploymentView } from '../projections/deployments.js';
import type { RecoveryView } from '../projections/recovery.js';
import type { SessionView } from '../projections/setup-sessions.js';
import { SnapshotSystem } from '../schemas.js';
import { consoleUrl } from '../status-view.js';

/** One system the deployment's last snapshot lists. */
export type ReportedSystem = v.InferOutput<typeof SnapshotSystem>;

/** What the session page shows: the session, its deployment now, the deployment's last recovery. */
export interface SessionPageData {
  readonly session: SessionView;
  readonly deployment?: DeploymentView;
  readonly recovery?: RecoveryView;
  readonly systems: readonly ReportedSystem[];
  readonly systemsLive: number;
  /** The console link, once the session has completed. */
  readonly dashboardUrl?: string;
}

const Systems = v.array(SnapshotSystem);

/** Gathers the session page's data from the read models (the writer's, current as of this request). */
export function sessionPageData(models: AuthorityModels, session: SessionView): SessionPageData {
  const deployment = session.deploymentId === undefined ? undefined : models.deployments.byId[session.deploymentId];
  const last = deployment?.recoveryIds.at(-1);
  const recovery = last === undefined ? undefined : models.recovery.byId[last];
  // The snapshot was validated when it was accepted; parsing again only recovers its type.
  const parsed = v.safeParse(Systems, deployment?.snapshot?.systems ?? []);
  const dashboardUrl = session.status === 'completed' ? consoleUrl(deployment) : undefined;
  return {
    session,
    systems: parsed.success ? parsed.output : [],
    systemsLive: deployment ? liveSystems(deployment) : 0,
    ...(deployment ? { deployment } : {}),
    ...(recovery ? { recovery } : {}),
    ...(dashboardUrl ? { dashboardUrl } : {}),
  };
}

/** One row of the overview: a deployment, the session that created it and whether it needs the owner. */
export interface DeploymentRow {
  readonly deployment: DeploymentView;
  readonly firstSession: SessionView | undefined;
  readonly recoveryOpen: boolean;
}

/** What the overview shows: the tenant's deployments (those needing recovery first) and its latest sessions. */
export interface OverviewData {
  readonly deployments: readonly DeploymentRow[];
  readonly sessions: readonly SessionView[];
  readonly moreSessions: number;
}

/** How many sessions the overview lists (newest first). */
export const OVERVIEW_SESSIONS = 50;

/** Gathers the overview of one tenant. */
export function overviewData(models: AuthorityModels, tenantId: string): OverviewData {
  const sessions = Object.values(models.sessions.byId).filter((s) => s.tenantId === tenantId);
  sessions.sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : a.id.localeCompare(b.id)));
  const recoveries = models.recovery;
  const rows = Object.values(models.deployments.byId)
    .filter((d) => d.tenantId === tenantId)
    .map((d) => ({
      deployment: d,
      firstSession: models.sessions.byId[d.firstSessionId],
      recoveryOpen: d.recoveryIds.some((id) => recoveries.byId[id] && !recoveries.byId[id]!.claimedAt),
    }));
  rows.sort(
    (a, b) =>
      Number(b.deployment.status === 'central_missing') - Number(a.deployment.status === 'central_missing') ||
      a.deployment.id.localeCompare(b.deployment.id),
  );
  return {
    deployments: rows,
    sessions: sessions.slice(0, OVERVIEW_SESSIONS),
    moreSessions: Math.max(0, sessions.length - OVERVIEW_SESSIONS),
  };
}
