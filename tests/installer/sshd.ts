import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../setup/processes.js';

/** A throwaway OpenSSH server on a loopback port: its own host key, one authorized user key. */
export interface TestSshd {
  readonly port: number;
  /** The address it listens on (127.0.0.1, or the namespace's address). */
  readonly address: string;
  readonly user: string;
  /** The private key that logs in (0600). */
  readonly userKeyFile: string;
  /** The server's host key as an OpenSSH public key line. */
  readonly hostKey: string;
  /** `ssh-keygen -l`'s SHA256 fingerprint of the host key. */
  readonly hostKeyFingerprint: string;
  output(): string;
  stop(): Promise<void>;
}

function keygen(path: string): void {
  const r = spawnSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'vigil-test', '-f', path], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`);
}

/** Where and how a test sshd runs; every field optional (the default: 127.0.0.1 in this network namespace). */
export interface SshdOptions {
  /** Run as `ip netns exec <netns> /usr/sbin/sshd ...` (see netns.ts), listening on `listenAddress` there. */
  readonly netns?: string;
  /** The address to listen on and to check from this (the root) namespace; 127.0.0.1 by default. */
  readonly listenAddress?: string;
  /** An existing private key to authorize instead of making one (one installer key for several sshds). */
  readonly userKeyFile?: string;
  /** Further users allowed to log in besides the current one, with `~/.ssh/authorized_keys` read for them. */
  readonly extraUsers?: readonly string[];
}

/**
 * Starts `/usr/sbin/sshd -D -e -f <own config>` on `port` (127.0.0.1 unless `listenAddress`, in the network
 * namespace `netns` if given) as the current user (root in CI), with its own host key made in `dir`, a user key
 * made there too (or `userKeyFile`) and its own AuthorizedKeysFile there: nothing of the machine's SSH setup is
 * read or changed. Running as root, Debian's sshd requires its privilege separation directory /run/sshd (made at
 * boot by the package's tmpfiles entry, which a container never ran); it is created, empty, when missing. It is
 * ready once a TCP connection from this process (the root namespace) reaches the listen address.
 */
export async function startSshd(dir: string, port: number, opts: SshdOptions = {}): Promise<TestSshd> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hostKeyFile = join(dir, 'ssh_host_ed25519_key');
  const userKeyFile = opts.userKeyFile ?? join(dir, 'id_ed25519');
  keygen(hostKeyFile);
  if (opts.userKeyFile === undefined) keygen(userKeyFile);
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(`${userKeyFile}.pub`), { mode: 0o600 });
  const user = userInfo().username;
  const listen = opts.listenAddress ?? '127.0.0.1';
  const extra = opts.extraUsers ?? [];
  const config = join(dir, 'sshd_config');
  writeFileSync(config, [
    `Port ${port}`, `ListenAddress ${listen}`, `HostKey ${hostKeyFile}`, `AuthorizedKeysFile ${authorized}`,
    `PidFile ${join(dir, 'sshd.pid')}`, 'PermitRootLogin prohibit-password', 'PubkeyAuthentication yes', 'PasswordAuthentication no',
    'KbdInteractiveAuthentication no', 'UsePAM no', 'StrictModes no', `AllowUsers ${[user, ...extra].join(' ')}`, 'X11Forwarding no', 'AllowTcpForwarding no',
    'PrintMotd no', 'LogLevel ERROR', 'MaxStartups 100:30:200', 'MaxSessions 50',
    // sshd reads a user's keys with that user's rights, which do not reach `dir`: the extra users' own file instead.
    ...(extra.length > 0 ? [`Match User ${extra.join(',')}`, '  AuthorizedKeysFile .ssh/authorized_keys'] : []), '',
  ].join('\n'), { mode: 0o600 });
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const argv = ['/usr/sbin/sshd', '-D', '-e', '-f', config];
  const proc: ChildProcess = opts.netns === undefined
    ? spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn('ip', ['netns', 'exec', opts.netns, ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await waitFor('sshd to listen', () => new Promise<boolean | undefined>((resolve) => {
    if (proc.exitCode !== null) throw new Error(`sshd exited: ${out}`);
    const s = connect(port, listen);
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(undefined));
  }));
  const hostKey = readFileSync(`${hostKeyFile}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const fp = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKeyFile}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1] ?? '';
  return {
    port, address: listen, user, userKeyFile, hostKey, hostKeyFingerprint: fp, output: () => out,
    async stop() { if (proc.exitCode === null) proc.kill('SIGTERM'); await exited; },
  };
}
