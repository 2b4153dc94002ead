import { generateKeyPairSync, sign, createPrivateKey } from 'node:crypto';
import { generateToken } from '../../auth/tokens.js';
import { proofMessage } from '../../setup/identity-key.js';
import type { InstallationScope } from '../../setup/scope.js';
import type { AuthorityClient } from './authority-client.js';
import { centralBundle, collectorBundles, type BundleOptions, type Provisioning, type VmBundle } from './bundle.js';
import { isUnfinished, type InstallState, type StateStore } from './install-state.js';
import type { InventoryProvider, InventoryVm } from './inventory.js';
import { formatPlan, outsideScope, planInstall, UNSUPPORTED_OS, type InstallPlan, type PlanEntry } from './plan.js';
import { ChecksFailedError, runPreflight, type CheckResult, type Probe } from './preflight.js';
import { stageBundle, switchBundle } from './stage.js';
import { guardedTransport, type VmTransport } from './transport.js';
import { startService, type ServiceManager } from './services.js';

export type { ServiceManager } from './services.js';

/** The person declined the plan: nothing was claimed or touched. */
export class InstallDeclinedError extends Error {
  override readonly name = 'InstallDeclinedError';
}

/** What one installer run needs. */
export interface InstallOptions {
  readonly client: AuthorityClient;
  readonly setupUrl: string;
  /** The setup token (`lst_...`), or the recovery token (`lrc_...`) with `recovery`; absent when resuming. */
  readonly token: string | undefined;
  readonly recovery: boolean;
  /** Continue the run kept in `state` (same session, no token) instead of claiming. */
  readonly resume: boolean;
  readonly state: StateStore;
  readonly inventory: InventoryProvider;
  /** Builds the transport for `approved` VMs: it can reach only them (before a claim: the scope proposed). */
  readonly transport: (approved: readonly string[], vms: readonly InventoryVm[]) => VmTransport & { probe?: Probe };
  /** Shows the plan and answers whether to go on (the CLI asks, or `--yes` answers for the person). */
  readonly confirm: (planText: string, plan: InstallPlan) => Promise<boolean>;
  /** Shows the check table (each run checks before it claims or resumes). */
  readonly reportChecks: (results: readonly CheckResult[]) => void;
  readonly isOrchestrationHost: (address: string) => boolean;
  /** The `vigil` executable on the VMs (the units' ExecStart). */
  readonly vigilExec: string;
  readonly serviceManager: ServiceManager;
  /** Syslog-format files each collector also tails (the journal is always followed where there is one). */
  readonly collectorFiles: readonly string[];
  readonly centralListen: { host: string; port: number };
  readonly snapshotIntervalSeconds: number;
  readonly waitMs: number;
  readonly pollMs: number;
  readonly progress: (line: Record<string, unknown>) => void;
  /** Called as soon as the console credential exists (after the proof), so a run that dies later still keeps it. */
  readonly onConsoleCredential: (deploymentId: string, credential: ConsoleCredential) => void;
}

/** The console credential the authority releases once. */
export type ConsoleCredential = Provisioning['central']['console_credential'];

/**
 * How a run ended: `completed`; `awaiting_services` (files in place, the operator starts the services, then
 * `--resume` waits); `awaiting_snapshot` (the wait ran out: `--resume` waits again).
 */
export interface InstallResult {
  readonly status: 'completed' | 'awaiting_services' | 'awaiting_snapshot';
  readonly sessionId: string;
  readonly deploymentId: string;
  readonly scope: InstallationScope;
  readonly centralVmId: string;
  readonly enrollmentEpoch: number;
  readonly touched: readonly string[];
  /** Discovered VMs left out: excluded, no collector for their OS, or outside the approved scope. */
  readonly notInstalled: readonly PlanEntry[];
  readonly consoleCredential: ConsoleCredential;
  /** With `awaiting_services`: what to start on each VM. */
  readonly toStart: ReadonlyArray<{ vm: string; unit: string; execStart: readonly string[] }>;
}

interface Claimed {
  session_id: string;
  session_token: string;
  challenge: string;
  deployment_id: string;
  installation_scope: InstallationScope;
}

/** A temporary Ed25519 fleet key as an OpenSSH public key line (the private half never leaves this run). */
function fleetPublicKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(12);
  const len = (n: number) => Buffer.from([n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]);
  const blob = Buffer.concat([len(11), Buffer.from('ssh-ed25519'), len(32), raw]);
  return `ssh-ed25519 ${blob.toString('base64')} vigil-fleet-bootstrap`;
}

async function claim(o: InstallOptions, scope: InstallationScope, identityPem: string): Promise<Claimed> {
  const deployment_identity = { public_key_spki_pem: identityPem };
  if (o.recovery) return o.client.post<Claimed>('/v1/recovery/claim', { recovery_token: o.token, deployment_identity });
  await o.client.post('/v1/setup-sessions/connect', { setup_token: o.token });
  return o.client.post<Claimed>('/v1/setup-sessions/claim', {
    setup_token: o.token,
    deployment_identity,
    installation_scope: scope,
  });
}

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

/** Runs the checks and stops (nothing claimed, nothing changed) when any fails. */
async function check(o: InstallOptions, plan: InstallPlan, vms: readonly InventoryVm[], probeVms: readonly string[]) {
  const t = o.transport(probeVms, vms);
  const results = await runPreflight({
    client: o.client,
    plan,
    vms,
    probeVms,
    probe: t.probe,
    serviceManager: o.serviceManager,
    centralPort: o.centralListen.port === 0 ? 4173 : o.centralListen.port,
    portMayBeOurs: o.recovery || o.resume,
  });
  o.reportChecks(results);
  if (results.some((r) => r.status === 'fail')) throw new ChecksFailedError(results);
}

/** Discovers, plans, confirms, checks and claims: the new run's state, saved before anything else happens. */
async function start(o: InstallOptions, vms: readonly InventoryVm[], plan: InstallPlan): Promise<InstallState> {
  const previous = o.state.load();
  if (previous && isUnfinished(previous))
    throw new Error(
      `an unfinished install of deployment ${previous.deploymentId} is kept in ${o.state.path}: continue it with ` +
        `--resume or give it up with --abandon`,
    );
  if (!(await o.confirm(formatPlan(plan, o.inventory.name, o.recovery), plan)))
    throw new InstallDeclinedError('the plan was not confirmed; nothing was claimed or changed');
  // Before a recovery claim the approved scope is unknown: probe only VMs an earlier run here had approved.
  const known = o.recovery ? (previous?.scope.vms ?? []) : plan.scope.vms;
  await check(
    o,
    plan,
    vms,
    plan.scope.vms.filter((id) => known.includes(id)),
  );
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const identity = {
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
  const c = await claim(o, plan.scope, identity.publicPem);
  const s: InstallState = {
    version: 1,
    status: 'running',
    setupUrl: o.setupUrl,
    recovery: o.recovery,
    sessionId: c.session_id,
    sessionToken: c.session_token,
    challenge: c.challenge,
    deploymentId: c.deployment_id,
    scope: c.installation_scope,
    identity,
    bootstrapKeyPublished: false,
    phases: [],
    vms: {},
  };
  o.state.save(s);
  o.progress({ msg: 'claimed', deployment_id: s.deploymentId, session_id: s.sessionId, vms: s.scope.vms });
  const unchecked = s.scope.vms.filter((id) => !known.includes(id));
  if (unchecked.length > 0) await check(o, { ...plan, scope: s.scope }, vms, unchecked);
  return s;
}

/** Proves possession once and keeps the provisioning in the state; the console credential is handed out at once. */
async function prove(o: InstallOptions, s: InstallState): Promise<NonNullable<InstallState['proven']>> {
  if (s.proven) return s.proven;
  const key = createPrivateKey(s.identity.privatePem);
  const signature = sign(null, proofMessage(s.sessionId, s.deploymentId, s.challenge), key).toString('base64');
  const { provisioning: p } = await o.client.post<{ provisioning: Provisioning }>(
    `/v1/setup-sessions/${s.sessionId}/prove`,
    { signature },
    s.sessionToken,
  );
  s.proven = {
    provisioning: p as unknown as { deployment_id: string },
    fleetPublicKey: fleetPublicKey(),
    collectorTokens: Object.fromEntries(p.collectors.map((col) => [col.collector_id, generateToken()])),
  };
  o.state.save(s);
  o.onConsoleCredential(s.deploymentId, p.central.console_credential);
  return s.proven;
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
