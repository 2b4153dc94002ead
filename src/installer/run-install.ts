import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { proofMessage } from '../setup/identity-key.js';
import { MAX_SCOPE_VMS, type InstallationScope } from '../setup/scope.js';
import type { AuthorityClient } from './authority-client.js';
import { selectCentral, type InventoryProvider, type InventoryVm } from './inventory.js';
import { guardedTransport, type VmTransport } from './transport.js';
import { VM_PATHS, installCentral, installCollectors, type Provisioning } from './vm-files.js';

/** What one installer run needs. */
export interface InstallOptions {
  readonly client: AuthorityClient;
  /** The setup token (`lst_...`), or the recovery token (`lrc_...`) with `recovery`. */
  readonly token: string;
  readonly recovery: boolean;
  readonly inventory: InventoryProvider;
  readonly transport: VmTransport;
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
  readonly consoleCredential: Provisioning['central']['console_credential'];
}

interface Claimed { session_id: string; session_token: string; challenge: string; deployment_id: string; installation_scope: InstallationScope }

function newIdentity(): { pem: string; privatePem: string; key: KeyObject } {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  return { pem: publicKey.export({ type: 'spki', format: 'pem' }).toString(), privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(), key: privateKey };
}

/** A temporary Ed25519 fleet key as an OpenSSH public key line (the private half never leaves this run). */
function fleetPublicKey(): string {
  const raw = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).subarray(12);
  const len = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b; };
  return `ssh-ed25519 ${Buffer.concat([len(11), Buffer.from('ssh-ed25519'), len(32), raw]).toString('base64')} vigil-fleet-bootstrap`;
}

/** The scope proposed from discovery: every VM to install, the central one first chosen by the documented rule. */
export function proposeScope(vms: readonly InventoryVm[]): InstallationScope {
  const central = selectCentral(vms);
  const ids = vms.filter((vm) => vm.install).map((vm) => vm.id);
  if (ids.length > MAX_SCOPE_VMS) throw new Error(`the inventory proposes ${ids.length} VMs; one installation scope holds at most ${MAX_SCOPE_VMS}`);
  return { central_vm_id: central.id, vms: ids };
}

async function claim(o: InstallOptions, scope: InstallationScope, identityPem: string): Promise<Claimed> {
  const deployment_identity = { public_key_spki_pem: identityPem };
  if (o.recovery) return o.client.post<Claimed>('/v1/recovery/claim', { recovery_token: o.token, deployment_identity });
  await o.client.post('/v1/setup-sessions/connect', { setup_token: o.token });
  return o.client.post<Claimed>('/v1/setup-sessions/claim', { setup_token: o.token, deployment_identity, installation_scope: scope });
}

async function waitForSnapshot(o: InstallOptions, c: Claimed): Promise<void> {
  const deadline = Date.now() + o.waitMs;
  for (;;) {
    const p = await o.client.get<{ first_snapshot_received: boolean }>(`/v1/setup-sessions/${c.session_id}/progress`, c.session_token);
    if (p.first_snapshot_received) return;
    if (Date.now() > deadline) throw new Error(`no deployment snapshot within ${Math.round(o.waitMs / 1000)} s: check that the central instance started and reaches the authority`);
    await new Promise((r) => setTimeout(r, o.pollMs));
  }
}

/** Runs the setup protocol end to end: discover, claim, prove, publish the fleet key, install, wait, complete. */
export async function runInstall(o: InstallOptions): Promise<InstallResult> {
  const vms = await o.inventory.list();
  const proposed = proposeScope(vms);
  const identity = newIdentity();
  const c = await claim(o, proposed, identity.pem);
  const scope = c.installation_scope;
  const t = guardedTransport(o.transport, scope.vms);
  o.progress({ msg: 'claimed', deployment_id: c.deployment_id, session_id: c.session_id, central_vm_id: scope.central_vm_id, vms: scope.vms });
  const signature = sign(null, proofMessage(c.session_id, c.deployment_id, c.challenge), identity.key).toString('base64');
  const { provisioning: p } = await o.client.post<{ provisioning: Provisioning }>(`/v1/setup-sessions/${c.session_id}/prove`, { signature }, c.session_token);
  const phase = (name: string, detail?: string) => o.client.post(`/v1/setup-sessions/${c.session_id}/phases`, { phase: name, ...(detail ? { detail } : {}) }, c.session_token).then(() => o.progress({ msg: 'phase', phase: name }));
  const fleet = fleetPublicKey();
  await o.client.post(`/v1/setup-sessions/${c.session_id}/bootstrap-key`, { public_key: fleet, label: 'installer fleet bootstrap key' }, c.session_token);
  await phase('discovery_completed', `${vms.length} VMs discovered by ${o.inventory.name}; ${scope.vms.length} in scope`);
  await phase('central_install_started', scope.central_vm_id);
  const byId = new Map(vms.map((vm) => [vm.id, vm]));
  const centralHost = byId.get(scope.central_vm_id)?.address ?? scope.central_vm_id;
  const instanceUrl = `http://${centralHost.includes(':') ? `[${centralHost}]` : centralHost}:${o.centralListen.port === 0 ? 4173 : o.centralListen.port}`;
  for (const id of scope.vms) await t.writeFile(id, VM_PATHS.fleetKey, `${fleet}\n`, 0o644);
  await installCentral(t, p, identity.privatePem, { listenHost: o.centralListen.host, listenPort: o.centralListen.port, snapshotIntervalSeconds: o.snapshotIntervalSeconds, instanceUrl });
  await phase('central_instance_configured');
  await installCollectors(t, p, instanceUrl);
  await phase('collectors_provisioned', `${p.collectors.length} collectors, enrollment epoch ${p.enrollment_epoch}`);
  await phase('awaiting_first_snapshot');
  await waitForSnapshot(o, c);
  await phase('completed');
  return { sessionId: c.session_id, deploymentId: c.deployment_id, scope, centralVmId: scope.central_vm_id, enrollmentEpoch: p.enrollment_epoch, touched: [...t.touched].sort(), consoleCredential: p.central.console_credential };
}
