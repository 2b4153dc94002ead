import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listeningUrl, startChild, waitFor, type Child } from './processes.js';

/** Writes the static inventory the installer reads: vm-central (tagged, loopback), vm-db, vm-web, and vm-aaa kept out. */
export function writeInventory(dir: string, extra: object[] = []): string {
  const path = join(dir, 'inventory.json');
  writeFileSync(path, JSON.stringify({ vms: [
    { id: 'vm-aaa', os: 'linux', install: false },
    { id: 'vm-central', os: 'linux', address: '127.0.0.1', tags: ['vigil:central'] },
    { id: 'vm-db', os: 'linux' },
    { id: 'vm-web', os: 'linux' },
    ...extra,
  ] }));
  return path;
}

/**
 * Runs `vigil install ...args` against the `directory:` transport at `vms` and, as systemd would on the
 * central VM, starts `vigil serve` from the config the installer wrote there once its identity key changed
 * from `keyBefore`. `children` collects both processes for the caller to stop.
 */
export async function installAndServe(vms: string, args: string[], input: string | undefined, keyBefore: string | undefined, children: Child[]): Promise<{ installer: Child; instance: Child }> {
  const installer = startChild(args, input !== undefined ? { input } : {});
  children.push(installer);
  const file = (path: string) => join(vms, 'vm-central', path);
  const config = file('etc/vigil/vigil.config.json');
  const keyFile = file('etc/vigil/secrets/deployment-identity.key');
  await waitFor('the central instance config', () => existsSync(config) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') !== keyBefore && existsSync(file('etc/systemd/system/vigil.service')));
  const instance = startChild(['serve', '--config', config]);
  children.push(instance);
  await listeningUrl(instance);
  return { installer, instance };
}
