/** The three services Vigil runs under systemd. */
export type UnitKind = 'instance' | 'setup-authority' | 'collector';

/** What a unit needs: how to start `vigil`, its config, the one directory it may write, its user. */
export interface UnitOptions {
  /** The `vigil` executable (absolute path). */
  readonly vigilExec: string;
  readonly configFile: string;
  /** The only writable directories (state: the store, or the collector's key and spool). */
  readonly writable: readonly string[];
  /** The dedicated system user it runs as. */
  readonly user: string;
}

/** The unit file name of each service. */
export const UNIT_NAMES: Readonly<Record<UnitKind, string>> = {
  instance: 'vigil.service',
  'setup-authority': 'vigil-setup-authority.service',
  collector: 'vigil-collector.service',
};

const DESCRIPTIONS: Readonly<Record<UnitKind, string>> = {
  instance: 'Vigil security monitoring instance',
  'setup-authority': 'Vigil setup authority',
  collector: 'Vigil collector agent',
};

const ARGS: Readonly<Record<UnitKind, readonly string[]>> = {
  instance: ['serve', '--config'],
  'setup-authority': ['setup-authority', 'serve', '--config'],
  collector: ['collector', 'run', '--config'],
};

/** The default user of each service (created by the installer as a system user). */
export const UNIT_USERS: Readonly<Record<UnitKind, string>> = {
  instance: 'vigil',
  'setup-authority': 'vigil-authority',
  collector: 'vigil-collector',
};

/** A path as one systemd word: refuses what systemd would split or expand. */
function unitPath(p: string): string {
  if (!/^\/[A-Za-z0-9._\/@+-]*$/.test(p))
    throw new Error(
      `refusing path ${JSON.stringify(p)} in a unit file: only letters, digits and . _ / @ + - are allowed`,
    );
  return p;
}

/** The ExecStart argv of a unit (the test that cannot run systemd starts exactly this). */
export function execStart(kind: UnitKind, o: Pick<UnitOptions, 'vigilExec' | 'configFile'>): string[] {
  return [unitPath(o.vigilExec), ...ARGS[kind], unitPath(o.configFile)];
}

/**
 * Renders a sandboxed unit: a dedicated user, a read-only system (ProtectSystem=strict) with only
 * the state directory writable, no privilege gain, private /tmp, no kernel or control-group
 * changes, a system call allow list, restart on failure; `systemd-analyze security` rates it 2.0 or
 * better (a test holds it there). The collector also joins systemd-journal and adm to read logs.
 */
export function renderUnit(kind: UnitKind, o: UnitOptions): string {
  const lines = [
    '[Unit]',
    `Description=${DESCRIPTIONS[kind]}`,
    'Wants=network-online.target',
    'After=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    `User=${o.user}`,
    `Group=${o.user}`,
    ...(kind === 'collector' ? ['SupplementaryGroups=systemd-journal adm'] : []),
    `ExecStart=${execStart(kind, o).join(' ')}`,
    'Restart=on-failure',
    'RestartSec=10',
    'UMask=0077',
    'NoNewPrivileges=yes',
    'ProtectSystem=strict',
    `ReadWritePaths=${o.writable.map(unitPath).join(' ')}`,
    'ProtectHome=yes',
    'PrivateTmp=yes',
    'PrivateDevices=yes',
    'ProtectKernelTunables=yes',
    'ProtectKernelModules=yes',
    'ProtectKernelLogs=yes',
    'ProtectControlGroups=yes',
    'ProtectClock=yes',
    'ProtectHostname=yes',
    'RestrictSUIDSGID=yes',
    'RestrictRealtime=yes',
    'RestrictNamespaces=yes',
    'LockPersonality=yes',
    // AF_NETLINK: Node lists the host's addresses (host facts, listen checks) through a netlink socket.
    'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6 AF_NETLINK',
    'CapabilityBoundingSet=',
    'SystemCallArchitectures=native',
    // Node.js (V8's JIT, libuv, LMDB) needs nothing outside @system-service; @privileged (chown, setuid, mount,
    // ...) is none of its business. @resources stays: Node raises its open-file limit with setrlimit at start.
    // A call outside the list fails with EPERM instead of killing the process, so an optional one (pkey_alloc,
    // io_uring) falls back. MemoryDenyWriteExecute is left out on purpose: the JIT writes executable code.
    'SystemCallFilter=@system-service',
    'SystemCallFilter=~@privileged',
    'SystemCallErrorNumber=EPERM',
    // Other users' processes are hidden (a store lock names a process of this same user, still visible).
    'ProtectProc=invisible',
    'RemoveIPC=yes',
    'PrivateMounts=yes',
    '',
    '[Install]',
    'WantedBy=multi-user.target',
    '',
  ];
  return lines.join('\n');
}

/**
 * A warning for each configured path under /tmp or /var/tmp: `PrivateTmp=yes` gives the service its own
 * empty ones, so it would not find (or would lose on restart) what is there. Keys name where each path is set.
 */
export function privateTmpWarnings(paths: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(paths).flatMap(([key, path]) =>
    path !== undefined && /^\/(var\/)?tmp(\/|$)/.test(path)
      ? [
          `warning: ${key} is ${path}, under ${path.startsWith('/var/') ? '/var/tmp' : '/tmp'}, which the unit's ` +
            `PrivateTmp=yes hides from the service: move it (e.g. under /var/lib or /etc)`,
        ]
      : [],
  );
}
