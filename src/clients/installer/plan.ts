import { MAX_SCOPE_VMS, type InstallationScope } from '../../setup/scope.js';
import { selectCentral, type InventoryVm } from './inventory.js';

/** Why a discovered VM is or is not part of the installation. */
export type PlanRole = 'central' | 'collector' | 'excluded' | 'unsupported_os';

/** One line of the plan: a discovered VM, its role and what the installer will do there. */
export interface PlanEntry {
  readonly vmId: string;
  readonly os: InventoryVm['os'];
  readonly address: string | null;
  readonly role: PlanRole;
  readonly action: string;
  /** The VM's address is the machine the installer runs on (allowed only because it is listed). */
  readonly orchestrationHost: boolean;
}

/** The plan shown before claiming: the scope to claim and every discovered VM's fate. */
export interface InstallPlan {
  readonly scope: InstallationScope;
  readonly entries: readonly PlanEntry[];
}

/** The message for a VM whose OS has no collector (it stays out of the scope and is never touched). */
export const UNSUPPORTED_OS = 'no collector for this OS yet: left out of the scope, untouched';

/**
 * Builds the plan from discovery: the central VM by the documented rule; every other Linux VM to
 * install becomes a collector; VMs marked not to install and VMs of another OS stay out of the
 * scope (so the authority issues nothing for them and no transport can reach them).
 */
export function planInstall(
  vms: readonly InventoryVm[],
  isOrchestrationHost: (address: string) => boolean,
): InstallPlan {
  const central = selectCentral(vms);
  const entries = [...vms]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((vm): PlanEntry => {
      const role: PlanRole = !vm.install
        ? 'excluded'
        : vm.os !== 'linux'
          ? 'unsupported_os'
          : vm.id === central.id
            ? 'central'
            : 'collector';
      const action = {
        central: 'central instance: identity key, credentials, enrollment grants, config, vigil.service',
        collector: 'collector: enrollment token, bearer credential, agent config, vigil-collector.service',
        excluded: 'marked not to install: left out of the scope, untouched',
        unsupported_os: UNSUPPORTED_OS,
      }[role];
      return {
        vmId: vm.id,
        os: vm.os,
        address: vm.address ?? null,
        role,
        action,
        orchestrationHost: vm.address !== undefined && isOrchestrationHost(vm.address),
      };
    });
  const ids = entries.filter((e) => e.role === 'central' || e.role === 'collector').map((e) => e.vmId);
  if (ids.length > MAX_SCOPE_VMS)
    throw new Error(`the inventory proposes ${ids.length} VMs; one installation scope holds at most ${MAX_SCOPE_VMS}`);
  return { scope: { central_vm_id: central.id, vms: ids }, entries };
}

/** The message for a discovered VM the approved scope does not hold (a recovery never widens it). */
export const OUTSIDE_SCOPE = 'outside the approved scope: left untouched';

/** The discovered VMs left out of the approved scope, each saying why (never a collector's description). */
export function outsideScope(plan: InstallPlan, approved: InstallationScope): PlanEntry[] {
  return plan.entries
    .filter((e) => !approved.vms.includes(e.vmId))
    .map((e) => (e.role === 'central' || e.role === 'collector' ? { ...e, action: OUTSIDE_SCOPE } : e));
}

/**
 * The plan as text for a person to read before confirming. In a recovery the scope approved at the first install
 * binds the run, so that comes first and the inventory's VMs are only proposed.
 */
export function formatPlan(plan: InstallPlan, source: string, recovery = false): string {
  const width = Math.max(4, ...plan.entries.map((e) => e.vmId.length));
  const lines = plan.entries.map(
    (e) =>
      `  ${e.vmId.padEnd(width)}  ${e.os.padEnd(7)}  ${(e.address ?? '-').padEnd(15)}  ` +
      `${e.action}${e.orchestrationHost ? '  [this is the orchestration host; listed explicitly]' : ''}`,
  );
  const found = `Discovered ${plan.entries.length} VMs (${source}).`;
  const head = recovery
    ? [
        'Recovery: the scope approved at the first install applies; VMs discovered since are left untouched.',
        `${found} Inventory VMs (only those in the approved scope are installed): ${plan.scope.vms.join(', ')}.`,
      ]
    : [`${found} Central VM: ${plan.scope.central_vm_id}. Scope to claim: ${plan.scope.vms.join(', ')}.`];
  return [...head, ...lines, 'Nothing outside the scope will be probed or changed.'].join('\n');
}
