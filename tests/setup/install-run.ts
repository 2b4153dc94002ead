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

/** The arguments of `vigil install --resume` for a run started with `args`: the same, without the token. */
export function resumeArgs(args: readonly string[]): string[] {
  const at = args.indexOf('--token-file');
  return [...args.slice(0, at), ...args.slice(at + 2), '--resume'];
}

/**
 * Runs `vigil install ...args` against the `directory:` transport at `vms` (no service manager: it stops once the
 * files are in place, exit 75), starts `vigil serve` from the config the installer wrote on the central VM (as the
 * operator would) once its identity key changed from `keyBefore`, then `vigil install --resume`, which waits for
 * the first snapshot. `installer` is the resumed run, `started` the first (with the plan); `children` collects the processes for the caller to stop.
 */
export async function installAndServe(vms: string, args: string[], input: string | undefined, keyBefore: string | undefined, children: Child[]): Promise<{ installer: Child; started: Child; instance: Child }> {
  const installer = startChild(args, input !== undefined ? { input } : {});
  children.push(installer);
  const file = (path: string) => join(vms, 'vm-central', path);
  const config = file('etc/vigil/vigil.config.json');
  const keyFile = file('etc/vigil/secrets/deployment-identity.key');
  await waitFor('the central instance config', () => existsSync(config) && existsSync(keyFile) && readFileSync(keyFile, 'utf8') !== keyBefore && existsSync(file('etc/systemd/system/vigil.service')));
  const stopped = await installer.exited;
  if (stopped !== 75) throw new Error(`the installer should stop for the services to be started (75), not ${stopped}: ${installer.output()}`);
  const instance = startChild(['serve', '--config', config]);
  children.push(instance);
  await listeningUrl(instance);
  const resumed = startChild(resumeArgs(args));
  children.push(resumed);
  return { installer: resumed, started: installer, instance };
}
