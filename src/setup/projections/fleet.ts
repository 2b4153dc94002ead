import * as v from 'valibot';
import { SnapshotCollector } from '../schemas.js';
import type { DeploymentView } from './deployments.js';

/** One collector as the central instance's last snapshot reports it. */
export type SnapshotCollectorEntry = v.InferOutput<typeof SnapshotCollector>;

/** One VM of the deployment as the dashboard shows it: its enrollment in the current epoch, last evidence, silence. */
export interface FleetRow {
  readonly vmId: string;
  readonly role: 'central' | 'collector';
  /** In the approved scope (a collector only the snapshot names is not). */
  readonly inScope: boolean;
  readonly collectorId?: string;
  /** When it enrolled in the current epoch (undefined: not yet); the central VM reports instead. */
  readonly enrolledAt?: string;
  /** The epoch of the enrollment the last snapshot shows, when it is not the current one (or not known). */
  readonly staleEpoch?: number | 'unknown';
  /** Its last evidence (the central VM: its last heartbeat); null: none yet; undefined: the snapshot does not say. */
  readonly lastEvidenceAt?: string | null;
  /** Whether it is silent (the central VM: missing, or recovered and not reporting yet); undefined: not reported. */
  readonly silent?: boolean;
}

/** The fleet of a deployment as of its last snapshot, and how far the current epoch's enrollments have come. */
export interface Fleet {
  readonly rows: readonly FleetRow[];
  readonly epoch: number;
  /** Collectors in scope enrolled in the current epoch, and those still waiting. */
  readonly enrolled: number;
  readonly waiting: readonly string[];
  /** When the snapshot the rows come from was sent (undefined: none yet). */
  readonly asOf?: string;
  /** Collectors the snapshot had to leave out (its bound). */
  readonly omitted: number;
}

const Collectors = v.array(SnapshotCollector);

/** The collectors the deployment's last snapshot lists (none from an instance that does not report them). */
export function snapshotCollectors(d: DeploymentView): SnapshotCollectorEntry[] {
  // Validated when the snapshot was accepted; parsing again only recovers the type.
  const parsed = v.safeParse(Collectors, d.snapshot?.collectors ?? []);
  return parsed.success ? parsed.output : [];
}

/**
 * Whether a reported enrollment belongs to the deployment's current epoch: by the epoch of the grant it used, or,
 * for a token made on the instance (no grant), by being made after the epoch began.
 */
function inCurrentEpoch(d: DeploymentView, c: SnapshotCollectorEntry): boolean {
  if (c.enrollment_epoch !== undefined) return c.enrollment_epoch === d.epoch;
  return d.epochStartedAt !== undefined && Date.parse(c.enrolled_at) >= Date.parse(d.epochStartedAt);
}

function collectorRow(
  d: DeploymentView,
  vmId: string,
  c: SnapshotCollectorEntry | undefined,
  id: string,
  inScope: boolean,
): FleetRow {
  const grant = d.enrollments[id];
  const current = c !== undefined && inCurrentEpoch(d, c);
  // The authority's own redemption (an instance that redeems through it) also proves the current epoch.
  const enrolledAt = current ? c.enrolled_at : grant?.redeemed?.at;
  return {
    vmId,
    role: 'collector',
    inScope,
    collectorId: id,
    ...(enrolledAt !== undefined ? { enrolledAt } : {}),
    ...(c && !current ? { staleEpoch: c.enrollment_epoch ?? ('unknown' as const) } : {}),
    ...(c ? { lastEvidenceAt: c.last_evidence_at, silent: c.silent } : {}),
  };
}

/**
 * Every VM of the approved scope (the central VM first) with what the last snapshot says of its collector, then any
 * collector the snapshot names outside the scope. A VM's collector is the one its grant names, else the one the
 * snapshot ties to the VM, else the collector of the VM's id.
 */
export function fleetOf(d: DeploymentView): Fleet {
  const reported = snapshotCollectors(d);
  const byId = new Map(reported.map((c) => [c.collector_id, c]));
  const byVm = new Map(reported.filter((c) => c.vm_id !== undefined).map((c) => [c.vm_id!, c]));
  const grantOfVm = new Map(Object.values(d.enrollments).map((e) => [e.vmId, e.collectorId]));
  const central: FleetRow = {
    vmId: d.scope.central_vm_id,
    role: 'central',
    inScope: true,
    ...(d.lastHeartbeatAt !== undefined ? { lastEvidenceAt: d.lastHeartbeatAt } : { lastEvidenceAt: null }),
    // Recovered: the old central is gone and the reinstalled one has not reported yet.
    silent: d.status === 'central_missing' || d.status === 'recovered',
  };
  const used = new Set<string>();
  const rows: FleetRow[] = [central];
  for (const vmId of d.scope.vms) {
    if (vmId === d.scope.central_vm_id) continue;
    const id = grantOfVm.get(vmId) ?? byVm.get(vmId)?.collector_id ?? vmId;
    used.add(id);
    rows.push(collectorRow(d, vmId, byId.get(id), id, true));
  }
  for (const c of reported)
    if (!used.has(c.collector_id)) rows.push(collectorRow(d, c.vm_id ?? c.collector_id, c, c.collector_id, false));
  const inScope = rows.filter((r) => r.role === 'collector' && r.inScope);
  const omitted = d.snapshot?.collectors_omitted;
  return {
    rows,
    epoch: d.epoch,
    enrolled: inScope.filter((r) => r.enrolledAt !== undefined).length,
    waiting: inScope.filter((r) => r.enrolledAt === undefined).map((r) => r.vmId),
    ...(d.lastHeartbeatAt !== undefined ? { asOf: d.lastHeartbeatAt } : {}),
    omitted: typeof omitted === 'number' ? omitted : 0,
  };
}
