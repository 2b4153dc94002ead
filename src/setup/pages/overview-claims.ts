import type { DeploymentView } from '../projections/deployments.js';

/** A VM that more than one live (not abandoned) deployment lists in its scope. */
export interface SharedVm {
  readonly vmId: string;
  readonly deploymentIds: readonly string[];
}

/**
 * The VMs claimed by two or more of the given deployments that are not abandoned: each was handed another
 * deployment's files, so at most one of them is really installed there. VM ids compare case-insensitively, as the
 * inventory does.
 */
export function sharedVms(deployments: readonly DeploymentView[]): SharedVm[] {
  const byVm = new Map<string, { vmId: string; ids: string[] }>();
  for (const d of deployments) {
    if (d.status === 'abandoned') continue;
    for (const vmId of d.scope.vms) {
      const entry = byVm.get(vmId.toLowerCase()) ?? { vmId, ids: [] };
      entry.ids.push(d.id);
      byVm.set(vmId.toLowerCase(), entry);
    }
  }
  return [...byVm.values()]
    .filter((e) => e.ids.length > 1)
    .map((e) => ({ vmId: e.vmId, deploymentIds: [...e.ids].sort() }))
    .sort((a, b) => a.vmId.localeCompare(b.vmId));
}
