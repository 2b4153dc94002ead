import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import { waitFor } from '../setup/processes.js';

/** A throwaway OpenSSH server on a loopback port: its own host key, one authorized user key. */
export interface TestSshd {
  readonly port: number;
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

/**
 * Starts `/usr/sbin/sshd -D -e -f <own config>` on `port` (127.0.0.1) as the current user (root in
 * CI), with host and user keys made in `dir` and its own AuthorizedKeysFile there: nothing of the
 * machine's SSH setup is read or changed. Running as root, Debian's sshd requires its privilege
 * separation directory /run/sshd (made at boot by the package's tmpfiles entry, which a container
 * never ran); it is created, empty, when missing.
 */
export async function startSshd(dir: string, port: number): Promise<TestSshd> {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const hostKeyFile = join(dir, 'ssh_host_ed25519_key');
  const userKeyFile = join(dir, 'id_ed25519');
  keygen(hostKeyFile);
  keygen(userKeyFile);
  const authorized = join(dir, 'authorized_keys');
  writeFileSync(authorized, readFileSync(`${userKeyFile}.pub`), { mode: 0o600 });
  const user = userInfo().username;
  const config = join(dir, 'sshd_config');
  writeFileSync(config, [
    `Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${hostKeyFile}`, `AuthorizedKeysFile ${authorized}`,
    `PidFile ${join(dir, 'sshd.pid')}`, 'PermitRootLogin prohibit-password', 'PubkeyAuthentication yes', 'PasswordAuthentication no',
    'KbdInteractiveAuthentication no', 'UsePAM no', 'StrictModes no', `AllowUsers ${user}`, 'X11Forwarding no', 'AllowTcpForwarding no',
    'PrintMotd no', 'LogLevel ERROR', 'MaxStartups 100:30:200', 'MaxSessions 50', '',
  ].join('\n'), { mode: 0o600 });
  if (process.getuid?.() === 0 && !existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const proc: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-e', '-f', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  proc.stdout!.on('data', (c: Buffer) => { out += c.toString(); });
  proc.stderr!.on('data', (c: Buffer) => { out += c.toString(); });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  await waitFor('sshd to listen', () => new Promise<boolean | undefined>((resolve) => {
    if (proc.exitCode !== null) throw new Error(`sshd exited: ${out}`);
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(undefined));
  }));
  const hostKey = readFileSync(`${hostKeyFile}.pub`, 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const fp = spawnSync('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${hostKeyFile}.pub`], { encoding: 'utf8' }).stdout.split(' ')[1] ?? '';
  return {
    port, user, userKeyFile, hostKey, hostKeyFingerprint: fp, output: () => out,
    async stop() { if (proc.exitCode === null) proc.kill('SIGTERM'); await exited; },
  };
}
