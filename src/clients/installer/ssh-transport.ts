import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { networkInterfaces } from 'node:os';
import { ensureSecretDir, writeSecretFile } from '../../kernel/secret-files.js';
import type { InventoryVm } from './inventory.js';
import type { Probe } from './preflight.js';
import { ScopeViolationError, type VmTransport } from './transport.js';

/** How the installer reaches VMs with the system OpenSSH client (`ssh`). */
export interface SshOptions {
  /** The VMs the authority approved: the only ones this transport will ever connect to. */
  readonly approved: readonly string[];
  /** The discovered VMs: where each approved VM is (address, port, user, pinned host key, prefix). */
  readonly inventory: readonly InventoryVm[];
  /** The private key the installer logs in with (owner-only). */
  readonly identityFile: string;
  /** The known-hosts file this installer keeps (owner-only; never the user's or the system's). */
  readonly knownHostsFile: string;
  /** Record an unpinned VM's host key on first contact (and report it) instead of refusing it. */
  readonly trustOnFirstUse: boolean;
  readonly sshCommand?: string;
  readonly report: (line: Record<string, unknown>) => void;
}

/** Quotes one word for the remote POSIX shell (ssh always hands the command to one). */
export function shellQuote(word: string): string {
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `SHA256:...` fingerprint of an OpenSSH public key line, as `ssh-keygen -l` prints it. */
export function sshFingerprint(keyLine: string): string {
  const blob = Buffer.from(keyLine.trim().split(/\s+/)[1] ?? '', 'base64');
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/**
 * Whether an address is one of this machine's own non-loopback interface addresses (reported in the plan; never
 * implicit). A loopback address, `localhost` or a host name says nothing real about which machine answers: a port
 * forward, a network namespace or a container each have their own sshd there, so none is tagged.
 */
export function isOrchestrationHost(address: string): boolean {
  const a = address.toLowerCase();
  if (isIP(a) === 0) return false;
  return Object.values(networkInterfaces()).some((list) =>
    (list ?? []).some((i) => !i.internal && i.address.toLowerCase() === a),
  );
}

const alias = (vmId: string) => `vigil-vm-${vmId}`;

interface KnownHosts {
  lines: string[];
}

function readKnownHosts(path: string): KnownHosts {
  return {
    lines: existsSync(path)
      ? readFileSync(path, 'utf8')
          .split('\n')
          .filter((l) => l.trim() !== '')
      : [],
  };
}

/**
 * The SSH transport. Every call names a VM id; the target is looked up in the approved list and
 * the inventory only, so a host outside the approved `vms` cannot be reached (not even the
 * orchestration host, unless it is itself a listed VM with that address). Host keys are checked
 * strictly against this installer's own known-hosts file: a key pinned in the inventory is written
 * there first; an unpinned VM is refused unless trust-on-first-use is on, in which case its key is
 * recorded on first contact and its fingerprint reported.
 */
export function sshTransport(o: SshOptions): VmTransport & { readonly probe: Probe } {
  const approved = new Set(o.approved);
  const byId = new Map(o.inventory.map((vm) => [vm.id, vm]));
  if ((statSync(o.identityFile).mode & 0o077) !== 0)
    throw new Error(`${o.identityFile} is readable by group or others; run: chmod 600 ${o.identityFile}`);
  const checkedKeys = new Set<string>();

  function target(vmId: string): InventoryVm & { address: string } {
    if (!approved.has(vmId))
      throw new ScopeViolationError(`refusing to connect to ${vmId}: it is not in the approved installation scope`);
    const vm = byId.get(vmId);
    if (!vm?.address) throw new Error(`${vmId}: the inventory gives no address to reach it over SSH`);
    return { ...vm, address: vm.address };
  }

  /** Makes sure the known-hosts file holds the pinned key, or decides how an unpinned VM is checked. */
  function hostKeyPolicy(vm: InventoryVm): 'yes' | 'accept-new' {
    const known = readKnownHosts(o.knownHostsFile);
    const mine = known.lines.filter((l) => l.split(' ')[0] === alias(vm.id));
    if (vm.sshHostKey) {
      const [type, key] = vm.sshHostKey.split(' ');
      const pinned = `${alias(vm.id)} ${type} ${key}`;
      if (mine.length !== 1 || mine[0] !== pinned) {
        writeSecretFile(
          o.knownHostsFile,
          `${[...known.lines.filter((l) => l.split(' ')[0] !== alias(vm.id)), pinned].join('\n')}\n`,
        );
      }
      return 'yes';
    }
    if (mine.length > 0) return 'yes';
    if (!o.trustOnFirstUse)
      throw new Error(
        `${vm.id}: no pinned SSH host key (inventory sshHostKey) and none recorded in ${o.knownHostsFile}; pin it, ` +
          `or pass --trust-on-first-use to record it on first contact`,
      );
    ensureSecretDir(o.knownHostsFile);
    return 'accept-new';
  }

  function afterConnect(vm: InventoryVm, policy: 'yes' | 'accept-new'): void {
    if (policy !== 'accept-new' || checkedKeys.has(vm.id)) return;
    checkedKeys.add(vm.id);
    const recorded = readKnownHosts(o.knownHostsFile).lines.filter((l) => l.split(' ')[0] === alias(vm.id));
    // A key ssh could not record would be accepted silently on every connection: stop instead.
    if (recorded.length === 0)
      throw new Error(
        `${vm.id}: ssh did not record the host key in ${o.knownHostsFile}; check that its folder is writable`,
      );
    chmodSync(o.knownHostsFile, 0o600);
    for (const line of recorded) {
      const keyLine = line.split(' ').slice(1).join(' ');
      o.report({
        level: 'warn',
        msg: 'SSH host key recorded on first use: compare it with the VM console before trusting this deployment',
        vm: vm.id,
        key_type: keyLine.split(' ')[0],
        fingerprint: sshFingerprint(keyLine),
        known_hosts: o.knownHostsFile,
      });
    }
  }

  /** Runs a command on the VM: as root, through `sudo -n` when the login user is another (checked by the preflight). */
  function ssh(vmId: string, command: string, input?: string): Promise<string> {
    const vm = target(vmId);
    return login(vm, (vm.sshUser ?? 'root') === 'root' ? command : `sudo -n -- sh -c ${shellQuote(command)}`, input);
  }

  function login(vm: InventoryVm & { address: string }, remoteCommand: string, input?: string): Promise<string> {
    const vmId = vm.id;
    const policy = hostKeyPolicy(vm);
    const args = [
      '-F',
      '/dev/null',
      '-T',
      '-i',
      o.identityFile,
      '-p',
      String(vm.sshPort ?? 22),
      '-l',
      vm.sshUser ?? 'root',
      '-o',
      'BatchMode=yes',
      '-o',
      'IdentitiesOnly=yes',
      '-o',
      'PasswordAuthentication=no',
      '-o',
      'KbdInteractiveAuthentication=no',
      '-o',
      `UserKnownHostsFile=${o.knownHostsFile}`,
      '-o',
      'GlobalKnownHostsFile=/dev/null',
      '-o',
      `StrictHostKeyChecking=${policy}`,
      '-o',
      `HostKeyAlias=${alias(vm.id)}`,
      '-o',
      'CheckHostIP=no',
      '-o',
      'UpdateHostKeys=no',
      '-o',
      'ConnectTimeout=30',
      '-o',
      'ServerAliveInterval=15',
      '-o',
      'LogLevel=ERROR',
      '--',
      vm.address,
      remoteCommand,
    ];
    return new Promise((resolve, reject) => {
      const child = spawn(o.sshCommand ?? 'ssh', args, { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (c: Buffer) => {
        if (out.length < 1 << 20) out += c.toString();
      });
      child.stderr.on('data', (c: Buffer) => {
        if (err.length < 1 << 16) err += c.toString();
      });
      child.once('error', (e) => reject(new Error(`${vmId}: cannot run ssh: ${e.message}`)));
      child.once('close', (code) => {
        if (code === 0) {
          try {
            afterConnect(vm, policy);
          } catch (e) {
            reject(e as Error);
            return;
          }
          resolve(out);
          return;
        }
        reject(
          new Error(
            `${vmId}: ssh ${vm.sshUser ?? 'root'}@${vm.address}:${vm.sshPort ?? 22} failed (exit ${code}): ` +
              `${err.trim().slice(-1200) || 'no message'}`,
          ),
        );
      });
      child.stdin.end(input ?? '');
    });
  }

  const root = (vmId: string) => target(vmId).prefix ?? '/';
  const at = (vmId: string, path: string) => `${root(vmId).replace(/\/+$/, '')}${path}`;
  const octal = (mode: number) => mode.toString(8).padStart(4, '0');
  const dirOf = (path: string) => path.slice(0, path.lastIndexOf('/')) || '/';

  return {
    root,
    probe: (vmId, script) => login(target(vmId), script),
    async writeFile(vmId, path, content, mode) {
      const full = at(vmId, path);
      const tmp = `${full}.vigil-new`;
      // The content goes through stdin, never the command line; umask 077 makes new parents 0700.
      await ssh(
        vmId,
        `umask 077 && mkdir -p -- ${shellQuote(dirOf(full))} && cat > ${shellQuote(tmp)} && chmod ${octal(mode)} -- ` +
          `${shellQuote(tmp)} && mv -f -- ${shellQuote(tmp)} ${shellQuote(full)}`,
        content,
      );
    },
    async makeDir(vmId, path, mode) {
      const full = at(vmId, path);
      await ssh(vmId, `umask 077 && mkdir -p -- ${shellQuote(full)} && chmod ${octal(mode)} -- ${shellQuote(full)}`);
    },
    async run(vmId, argv) {
      if (argv.length === 0) throw new Error('refusing an empty command');
      return ssh(vmId, argv.map(shellQuote).join(' '));
    },
    async modes(vmId, paths) {
      const full = paths.map((p) => at(vmId, p));
      const script =
        `for f in ${full.map(shellQuote).join(' ')}; do if [ -e "$f" ]; then printf '%s %s\\n' "$(stat ` +
        `-c %a -- "$f")" "$f"; fi; done`;
      const out = await ssh(vmId, script);
      const back = new Map(full.map((f, i) => [f, paths[i]!]));
      const found = new Map<string, number>();
      for (const line of out.split('\n')) {
        const m = /^([0-7]{3,4}) (.+)$/.exec(line);
        const p = m ? back.get(m[2]!) : undefined;
        if (m && p) found.set(p, Number.parseInt(m[1]!, 8));
      }
      return found;
    },
    async rename(vmId, moves) {
      if (moves.length === 0) return;
      await ssh(
        vmId,
        moves.map(([a, b]) => `mv -f -- ${shellQuote(at(vmId, a))} ${shellQuote(at(vmId, b))}`).join(' && '),
      );
    },
  };
}
