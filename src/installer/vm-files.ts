import { hashToken } from '../auth/tokens.js';
import type { VmTransport } from './transport.js';

/** The provisioning bundle the authority releases after the proof (docs/setup-protocol.md). */
export interface Provisioning {
  deployment_id: string;
  enrollment_epoch: number;
  authority_url: string;
  central: { vm_id: string; console_credential: { id: string; token: string; roles: string[]; generation: number } };
  collectors: Array<{ vm_id: string; collector_id: string; enrollment_token: string; expires_at: string; enrollment_epoch: number }>;
}

/** Where Vigil's files go on a VM. */
export const VM_PATHS = {
  config: '/etc/vigil/vigil.config.json',
  identityKey: '/etc/vigil/secrets/deployment-identity.key',
  credentials: '/etc/vigil/secrets/credentials.json',
  enrollmentGrants: '/etc/vigil/secrets/enrollment-grants.json',
  store: '/var/lib/vigil/store',
  fleetKey: '/etc/vigil/fleet-bootstrap.pub',
  collectorConfig: '/etc/vigil/collector/collector.json',
  collectorToken: '/etc/vigil/collector/secrets/enrollment-token',
} as const;

/** Options of the central instance the installer writes. */
export interface CentralOptions { readonly listenHost: string; readonly listenPort: number; readonly snapshotIntervalSeconds: number; readonly instanceUrl: string }

const onVm = (t: VmTransport, vmId: string, path: string) => `${t.root(vmId).replace(/\/+$/, '')}${path}`;

/**
 * Installs the central instance's configuration: identity key, config with the `deployment` block,
 * the console credential (hash only) and the enrollment grants (hashes only), then starts the service.
 */
export async function installCentral(t: VmTransport, p: Provisioning, identityKeyPem: string, o: CentralOptions): Promise<void> {
  const vm = p.central.vm_id;
  await t.writeFile(vm, VM_PATHS.identityKey, identityKeyPem, 0o600);
  const cred = p.central.console_credential;
  await t.writeFile(vm, VM_PATHS.credentials, `${JSON.stringify({ credentials: [{ id: cred.id, tokenHash: hashToken(cred.token), roles: cred.roles, disabled: false }] }, null, 2)}\n`, 0o600);
  const grants = { deployment_id: p.deployment_id, enrollment_epoch: p.enrollment_epoch, collectors: p.collectors.map((c) => ({ collector_id: c.collector_id, vm_id: c.vm_id, token_sha256: hashToken(c.enrollment_token), expires_at: c.expires_at })) };
  await t.writeFile(vm, VM_PATHS.enrollmentGrants, `${JSON.stringify(grants, null, 2)}\n`, 0o600);
  const config = {
    server: { host: o.listenHost, port: o.listenPort },
    auth: { credentialsFile: onVm(t, vm, VM_PATHS.credentials) },
    storage: { path: onVm(t, vm, VM_PATHS.store) },
    deployment: {
      authorityUrl: p.authority_url, deploymentId: p.deployment_id, identityKeyFile: onVm(t, vm, VM_PATHS.identityKey),
      intervalSeconds: o.snapshotIntervalSeconds, instanceUrl: o.instanceUrl, centralVmId: vm,
      enrollmentGrantsFile: onVm(t, vm, VM_PATHS.enrollmentGrants),
    },
  };
  await t.writeFile(vm, VM_PATHS.config, `${JSON.stringify(config, null, 2)}\n`, 0o644);
  await t.run(vm, ['systemctl', 'enable', '--now', 'vigil.service']);
}

/** Gives each remote collector its single-use enrollment token (0600) and where to enroll, then starts it. */
export async function installCollectors(t: VmTransport, p: Provisioning, centralUrl: string): Promise<void> {
  for (const c of p.collectors) {
    await t.writeFile(c.vm_id, VM_PATHS.collectorToken, `${c.enrollment_token}\n`, 0o600);
    const config = { server: centralUrl, collectorId: c.collector_id, deploymentId: p.deployment_id, enrollmentEpoch: c.enrollment_epoch, tokenFile: onVm(t, c.vm_id, VM_PATHS.collectorToken) };
    await t.writeFile(c.vm_id, VM_PATHS.collectorConfig, `${JSON.stringify(config, null, 2)}\n`, 0o644);
    await t.run(c.vm_id, ['systemctl', 'enable', '--now', 'vigil-collector.service']);
  }
}
