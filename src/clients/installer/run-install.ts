import type { Provisioning } from './bundle.js';
import { centralBundle, collectorBundles, type BundleOptions, type VmBundle } from './bundle.js';
import type { InstallOptions, InstallResult } from './install-options.js';
import { isUnfinished, type InstallState } from './install-state.js';
import type { InventoryVm } from './inventory.js';
import { outsideScope, planInstall, UNSUPPORTED_OS } from './plan.js';
import { startService } from './services.js';
import { stageBundle, switchBundle } from './stage.js';
import { check, prove, start } from './start-run.js';
import { guardedTransport, type VmTransport } from './transport.js';

export type { ServiceManager } from './services.js';
export {
  InstallDeclinedError,
  type ConsoleCredential,
  type InstallOptions,
  type InstallResult,
} from './install-options.js';

/** Waits for the central instance's first snapshot; false when `waitMs` ran out (a resumable state, not a failure). */
async function waitForSnapshot(o: InstallOptions, s: InstallState): Promise<boolean> {
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    const p = await o.client.get<{ first_snapshot_received: boolean }>(
      `/v1/setup-sessions/${s.sessionId}/progress`,
      s.sessionToken,
    );
    if (p.first_snapshot_received) return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
}

/** The bundles of the approved VMs (a VM whose OS has no collector stays untouched). */
function bundles(o: InstallOptions, s: InstallState, t: VmTransport, vms: readonly InventoryVm[]): VmBundle[] {
  const proven = s.proven!;
  const p = proven.provisioning as unknown as Provisioning;
  const byId = new Map(vms.map((vm) => [vm.id, vm]));
  const centralHost = byId.get(s.scope.central_vm_id)?.address ?? s.scope.central_vm_id;
  const port = o.centralListen.port === 0 ? 4173 : o.centralListen.port;
  const options: BundleOptions = {
    root: (vmId) => t.root(vmId),
    vigilExec: o.vigilExec,
    listen: o.centralListen,
    snapshotIntervalSeconds: o.snapshotIntervalSeconds,
    instanceUrl: `http://${centralHost.includes(':') ? `[${centralHost}]` : centralHost}:${port}`,
    vmAddresses: s.scope.vms.map((id) => byId.get(id)?.address).filter((a): a is string => a !== undefined),
    identityKeyPem: s.identity.privatePem,
    fleetPublicKey: proven.fleetPublicKey,
    collectorFiles: o.collectorFiles,
    collectorTokens: new Map(Object.entries(proven.collectorTokens)),
  };
  const collectors = collectorBundles(p, options).filter((b) => {
    const os = byId.get(b.vmId)?.os;
    if (os === undefined || os === 'linux') return true;
    o.progress({ msg: UNSUPPORTED_OS, vm: b.vmId, os });
    return false;
  });
  return [centralBundle(p, options), ...collectors];
}

/**
 * Runs the setup protocol, or resumes it from the state: check, claim, prove (the console credential kept at once),
 * publish the fleet key, stage every VM's files, switch them into place only once all staged fine, start the services
 * (or, without a service manager, stop for the operator to start them), wait for the first snapshot, complete. Every
 * step is saved, so a run that dies or times out is resumed with the same session.
 */
export async function runInstall(o: InstallOptions): Promise<InstallResult> {
  const vms = await o.inventory.list();
  const plan = planInstall(vms, o.isOrchestrationHost);
  let s: InstallState;
  if (o.resume) {
    const kept = o.state.load();
    if (!kept || !isUnfinished(kept)) throw new Error(`no unfinished install to resume in ${o.state.path}`);
    s = kept;
    o.progress({ msg: 'resuming', deployment_id: s.deploymentId, session_id: s.sessionId, vms: s.vms });
    await check(o, { ...plan, scope: s.scope }, vms, s.scope.vms);
    s.status = 'running';
  } else s = await start(o, vms, plan);
  const t = guardedTransport(o.transport(s.scope.vms, vms), s.scope.vms);
  const proven = await prove(o, s);
  const p = proven.provisioning as unknown as Provisioning;
  const save = () => o.state.save(s);
  const phase = async (name: string, detail?: string) => {
    if (s.phases.includes(name)) return;
    await o.client.post(
      `/v1/setup-sessions/${s.sessionId}/phases`,
      { phase: name, ...(detail ? { detail } : {}) },
      s.sessionToken,
    );
    s.phases.push(name);
    save();
    o.progress({ msg: 'phase', phase: name });
  };
  if (!s.bootstrapKeyPublished) {
    await o.client.post(
      `/v1/setup-sessions/${s.sessionId}/bootstrap-key`,
      { public_key: proven.fleetPublicKey, label: 'installer fleet bootstrap key' },
      s.sessionToken,
    );
    s.bootstrapKeyPublished = true;
    save();
  }
  const notInstalled = outsideScope(plan, s.scope);
  await phase(
    'discovery_completed',
    `${vms.length} VMs discovered by ${o.inventory.name}; ${s.scope.vms.length} in scope; ` +
      `${notInstalled.filter((e) => e.role === 'unsupported_os').length} without a collector for their OS`,
  );
  await phase('central_install_started', s.scope.central_vm_id);
  const all = bundles(o, s, t, vms);
  // Stage everything first: a VM that refuses (host key, sudo, disk) stops the run before any live file changes.
  for (const b of all.filter((x) => s.vms[x.vmId] === undefined || s.vms[x.vmId] === 'staged')) {
    await stageBundle(t, b);
    s.vms[b.vmId] = 'staged';
    save();
  }
  const toStart: Array<{ vm: string; unit: string; execStart: readonly string[] }> = [];
  for (const b of all) {
    if (s.vms[b.vmId] === 'staged') {
      await switchBundle(t, b);
      s.vms[b.vmId] = 'switched';
      save();
      if (o.serviceManager === 'none') {
        toStart.push({ vm: b.vmId, unit: b.unit.name, execStart: b.unit.execStart });
        const msg = 'service installed, not started (--service-manager none)';
        o.progress({ msg, vm: b.vmId, unit: b.unit.name, exec_start: b.unit.execStart });
      }
    }
    if (s.vms[b.vmId] === 'switched' && o.serviceManager === 'systemd') {
      await startService(t, b, o.progress);
      s.vms[b.vmId] = 'started';
      save();
    }
    if (b.role === 'central') await phase('central_instance_configured');
  }
  await phase('collectors_provisioned', `${p.collectors.length} collectors, enrollment epoch ${p.enrollment_epoch}`);
  await phase('awaiting_first_snapshot');
  const result = (status: InstallResult['status']): InstallResult => {
    s.status = status === 'completed' ? 'completed' : status;
    save();
    return {
      status,
      sessionId: s.sessionId,
      deploymentId: s.deploymentId,
      scope: s.scope,
      centralVmId: s.scope.central_vm_id,
      enrollmentEpoch: p.enrollment_epoch,
      touched: Object.keys(s.vms).sort(),
      notInstalled,
      consoleCredential: p.central.console_credential,
      toStart,
    };
  };
  // Files just switched under --service-manager none: the operator starts the services, then --resume waits.
  if (toStart.length > 0) return result('awaiting_services');
  if (!(await waitForSnapshot(o, s))) return result('awaiting_snapshot');
  await phase('completed');
  return result('completed');
}
