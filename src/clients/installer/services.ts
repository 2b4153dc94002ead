import type { VmBundle } from './bundle.js';
import type { VmTransport } from './transport.js';

/** How services are started on the VMs: systemd, or not at all (files and units only; the operator starts them). */
export type ServiceManager = 'systemd' | 'none';

/**
 * Starts a VM's service under systemd (dedicated user, owned config, restart to pick up new files) and reads its state
 * back.
 */
export async function startService(
  t: VmTransport,
  b: VmBundle,
  progress: (line: Record<string, unknown>) => void,
): Promise<void> {
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
  progress({ msg: 'service status', vm: b.vmId, unit: b.unit.name, state: state.trim() });
}
