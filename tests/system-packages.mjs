#!/usr/bin/env node
// The test set-up's one step outside npm: the Debian packages some tests drive for real (a browser,
// an SSH server, rsyslog, systemd-analyze for the units, curl and jq for the API examples of docs/api.md). `npm test` runs this first; it installs what is missing with apt-get
// (as root, as CI runs) and otherwise says exactly what to install. Each entry names the file the
// tests look for, so a package that is already there costs nothing. It also refuses to start on a
// nearly full temporary directory, where the end-to-end tests would fail in ways that hide why.
import { execFileSync } from 'node:child_process';
import { existsSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';

/** Free space the suite needs in the temporary directory: its stores, a browser profile, servers' logs. */
const NEEDED_MIB = 1024;
const fs = statfsSync(tmpdir());
const freeMiB = Math.floor((fs.bavail * fs.bsize) / 2 ** 20);
if (freeMiB < NEEDED_MIB) {
  console.error(`test set-up: only ${freeMiB} MiB free in ${tmpdir()}; the tests need about ${NEEDED_MIB} MiB there (LMDB stores, a browser profile). Free some space (old vigil-* directories left by an interrupted run or a benchmark), or point TMPDIR at a larger file system.`);
  process.exit(1);
}

/** Debian package -> the file whose presence shows it is installed. Tests name these paths. */
const PACKAGES = {
  chromium: '/usr/bin/chromium',
  'openssh-server': '/usr/sbin/sshd',
  'openssh-client': '/usr/bin/ssh-keygen',
  rsyslog: '/usr/sbin/rsyslogd',
  bsdutils: '/usr/bin/logger',
  openssl: '/usr/bin/openssl',
  'python3-minimal': '/usr/bin/python3',
  systemd: '/usr/bin/systemd-analyze',
  'nats-server': '/usr/sbin/nats-server',
  curl: '/usr/bin/curl',
  jq: '/usr/bin/jq',
};

const missing = Object.entries(PACKAGES).filter(([, file]) => !existsSync(file)).map(([name]) => name);
if (missing.length === 0) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot || !existsSync('/usr/bin/apt-get')) {
  console.error(`test set-up: missing Debian packages ${missing.join(', ')}; install them with: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${missing.join(' ')}`);
  process.exit(1);
}

console.log(`test set-up: installing ${missing.join(', ')} from Debian's packages`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
const apt = (args) => execFileSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
try {
  apt(['update']);
  apt(['install', '-y', '--no-install-recommends', ...missing]);
} catch (err) {
  console.error(`test set-up: apt-get failed (${err instanceof Error ? err.message : String(err)})`);
  process.exit(1);
}
const still = Object.entries(PACKAGES).filter(([, file]) => !existsSync(file)).map(([name]) => name);
if (still.length > 0) {
  console.error(`test set-up: still missing after apt-get: ${still.join(', ')}`);
  process.exit(1);
}
