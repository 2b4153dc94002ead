import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { generateToken } from '../../auth/tokens.js';
import { proofMessage } from '../../setup/identity-key.js';
import type { InstallationScope } from '../../setup/scope.js';
import type { AuthorityClient } from './authority-client.js';
import { centralBundle, collectorBundles, type BundleOptions, type Provisioning, type VmBundle } from './bundle.js';
import type { InventoryProvider, InventoryVm } from './inventory.js';
import { formatPlan, planInstall, UNSUPPORTED_OS, type InstallPlan, type PlanEntry } from './plan.js';
import { guardedTransport, type VmTransport } from './transport.js';

/** How services are started on the VMs: systemd, or not at all (files and units only; the operator starts them). */
export type ServiceManager = 'systemd' | 'none';

/** The person declined the plan: nothing was claimed or touched. */
export class InstallDeclinedError extends Error {
  override readonly name = 'InstallDeclinedError';
}

/** What one installer run needs. */
export interface InstallOptions {
  readonly client: AuthorityClient;
  /** The setup token (`lst_...`), or the recovery token (`lrc_...`) with `recovery`. */
  readonly token: string;
  readonly recovery: boolean;
  readonly inventory: InventoryProvider;
  /** Builds the transport once the authority has approved the scope: it can reach only `approved`. */
  readonly transport: (approved: readonly string[], vms: readonly InventoryVm[]) => VmTransport;
  /** Shows the plan and answers whether to go on (the CLI asks, or `--yes` answers for the person). */
  readonly confirm: (planText: string, plan: InstallPlan) => Promise<boolean>;
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
}

/** The outcome of a run (no secrets except the console credential, which the CLI stores 0600). */
export interface InstallResult {
  readonly sessionId: string;
  readonly deploymentId: string;
  readonly scope: InstallationScope;
  readonly centralVmId: string;
  readonly enrollmentEpoch: number;
  readonly touched: readonly string[];
  /** Discovered VMs left out: excluded, or no collector for their OS yet. */
  readonly notInstalled: readonly PlanEntry[];
  readonly consoleCredential: Provisioning['central']['console_credential'];
}

interface Claimed {
  session_id: string;
  session_token: string;
  challenge: string;
  deployment_id: string;
  installation_scope: InstallationScope;
}

function newIdentity(): { pem: string; privatePem: string; key: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return {
    pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    key: privateKey,
  };
}

/** A temporary Ed25519 fleet key as an OpenSSH public key line (the private half never leaves this run). */
function fleetPublicKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(12);
  const len = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  return (
    `ssh-ed25519 ${Buffer.concat([len(11), Buffer.from('ssh-ed25519'), len(32), raw]).toString('base64')} ` +
    `vigil-fleet-bootstrap`
  );
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

async function waitForSnapshot(o: InstallOptions, c: Claimed): Promise<void> {
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    const p = await o.client.get<{ first_snapshot_received: boolean }>(
      `/v1/setup-sessions/${c.session_id}/progress`,
      c.session_token,
    );
    if (p.first_snapshot_received) return;
    if (Date.now() > deadline)
      throw new Error(
        `no deployment snapshot within ${Math.round(o.waitMs / 1000)} s: check that the central instance started and ` +
          `reaches the authority`,
      );
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
}

/**
 * Writes a VM's bundle, creates its state directory, and reads the modes back: secrets must be 0600 in 0700
 * directories.
 */
async function applyBundle(t: VmTransport, b: VmBundle): Promise<void> {
  for (const f of b.files) await t.writeFile(b.vmId, f.path, f.content, f.mode);
  await t.makeDir(b.vmId, b.stateDir, 0o700);
  const secretDirs = [
    ...new Set(b.files.filter((f) => f.mode === 0o600).map((f) => f.path.slice(0, f.path.lastIndexOf('/')))),
  ];
  const expected = new Map<string, number>([
    ...b.files.map((f): [string, number] => [f.path, f.mode]),
    ...secretDirs.map((d): [string, number] => [d, 0o700]),
    [b.stateDir, 0o700],
  ]);
  const actual = await t.modes(b.vmId, [...expected.keys()]);
  const wrong = [...expected]
    .filter(([path, mode]) => actual.get(path) !== mode)
    .map(([path, mode]) => `${path} is ${actual.get(path)?.toString(8) ?? 'missing'}, expected ${mode.toString(8)}`);
  if (wrong.length > 0) throw new Error(`${b.vmId}: files read back with the wrong permissions: ${wrong.join('; ')}`);
}

/**
 * Starts a VM's service under systemd (dedicated user, owned config, restart to pick up new files) and reads its state
 * back.
 */
async function startService(o: InstallOptions, t: VmTransport, b: VmBundle): Promise<void> {
  if (o.serviceManager === 'none') {
    o.progress({
      msg: 'service installed, not started (--service-manager none)',
      vm: b.vmId,
      unit: b.unit.name,
      exec_start: b.unit.execStart,
    });
    return;
  }
  if (t.root(b.vmId) !== '/') throw new Error(`${b.vmId}: --service-manager systemd needs the VM prefix /`);
  try {
    await t.run(b.vmId, ['id', '-u', b.unit.user]);
  } catch {
    await t.run(b.vmId, [
      'useradd',
      '--system',
      '--no-create-home',
      '--home-dir',
      '/nonexistent',
      '--shell',
      '/usr/sbin/nologin',
      b.unit.user,
    ]);
  }
  await t.run(b.vmId, ['chown', '-R', `${b.unit.user}:${b.unit.user}`, '--', ...b.ownedDirs, b.stateDir]);
  await t.run(b.vmId, ['systemctl', 'daemon-reload']);
  await t.run(b.vmId, ['systemctl', 'enable', b.unit.name]);
  await t.run(b.vmId, ['systemctl', 'restart', b.unit.name]);
  const state = await t
    .run(b.vmId, ['systemctl', 'is-active', b.unit.name])
    .catch((err: Error) => `not active (${err.message.slice(-200)})`);
  o.progress({ msg: 'service status', vm: b.vmId, unit: b.unit.name, state: state.trim() });
}

/**
 * Runs the setup protocol end to end: discover, show the plan, claim, prove, publish the fleet key, install, wait,
 * complete.
 */
export async function runInstall(o: InstallOptions): Promise<InstallResult> {
  const vms = await o.inventory.list();
  const plan = planInstall(vms, o.isOrchestrationHost);
  if (!(await o.confirm(formatPlan(plan, o.inventory.name, o.recovery), plan)))
    throw new InstallDeclinedError('the plan was not confirmed; nothing was claimed or changed');
  const identity = newIdentity();
  const c = await claim(o, plan.scope, identity.pem);
  const scope = c.installation_scope;
  const t = guardedTransport(o.transport(scope.vms, vms), scope.vms);
  o.progress({
    msg: 'claimed',
    deployment_id: c.deployment_id,
    session_id: c.session_id,
    central_vm_id: scope.central_vm_id,
    vms: scope.vms,
  });
  const signature = sign(null, proofMessage(c.session_id, c.deployment_id, c.challenge), identity.key).toString(
    'base64',
  );
  const { provisioning: p } = await o.client.post<{ provisioning: Provisioning }>(
    `/v1/setup-sessions/${c.session_id}/prove`,
    { signature },
    c.session_token,
  );
  const phase = (name: string, detail?: string) =>
    o.client
      .post(
        `/v1/setup-sessions/${c.session_id}/phases`,
        { phase: name, ...(detail ? { detail } : {}) },
        c.session_token,
      )
      .then(() => o.progress({ msg: 'phase', phase: name }));
  const fleet = fleetPublicKey();
  await o.client.post(
    `/v1/setup-sessions/${c.session_id}/bootstrap-key`,
    { public_key: fleet, label: 'installer fleet bootstrap key' },
    c.session_token,
  );
  const notInstalled = plan.entries.filter((e) => !scope.vms.includes(e.vmId));
  await phase(
    'discovery_completed',
    `${vms.length} VMs discovered by ${o.inventory.name}; ${scope.vms.length} in scope; ` +
      `${notInstalled.filter((e) => e.role === 'unsupported_os').length} without a collector for their OS`,
  );
  await phase('central_install_started', scope.central_vm_id);
  const byId = new Map(vms.map((vm) => [vm.id, vm]));
  const centralHost = byId.get(scope.central_vm_id)?.address ?? scope.central_vm_id;
  const port = o.centralListen.port === 0 ? 4173 : o.centralListen.port;
  const bundleOptions: BundleOptions = {
    root: (vmId) => t.root(vmId),
    vigilExec: o.vigilExec,
    listen: o.centralListen,
    snapshotIntervalSeconds: o.snapshotIntervalSeconds,
    instanceUrl: `http://${centralHost.includes(':') ? `[${centralHost}]` : centralHost}:${port}`,
    vmAddresses: scope.vms.map((id) => byId.get(id)?.address).filter((a): a is string => a !== undefined),
    identityKeyPem: identity.privatePem,
    fleetPublicKey: fleet,
    collectorFiles: o.collectorFiles,
    collectorTokens: new Map(p.collectors.map((col) => [col.collector_id, generateToken()])),
  };
  const central = centralBundle(p, bundleOptions);
  await applyBundle(t, central);
  await startService(o, t, central);
  await phase('central_instance_configured');
  for (const b of collectorBundles(p, bundleOptions)) {
    // A scope approved earlier may hold a VM whose OS has no collector: it stays untouched.
    const os = byId.get(b.vmId)?.os;
    if (os !== undefined && os !== 'linux') {
      o.progress({ msg: UNSUPPORTED_OS, vm: b.vmId, os });
      continue;
    }
    await applyBundle(t, b);
    await startService(o, t, b);
  }
  await phase('collectors_provisioned', `${p.collectors.length} collectors, enrollment epoch ${p.enrollment_epoch}`);
  await phase('awaiting_first_snapshot');
  await waitForSnapshot(o, c);
  await phase('completed');
  return {
    sessionId: c.session_id,
    deploymentId: c.deployment_id,
    scope,
    centralVmId: scope.central_vm_id,
    enrollmentEpoch: p.enrollment_epoch,
    touched: [...t.touched].sort(),
    notInstalled,
    consoleCredential: p.central.console_credential,
  };
}
