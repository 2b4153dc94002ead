import type { AuthorityClient } from './authority-client.js';
import type { InventoryVm } from './inventory.js';
import type { InstallPlan } from './plan.js';

/** The Node.js versions Vigil runs on (package.json `engines.node`; a test keeps them equal). */
export const NODE_ENGINES = '^20.19.0 || ^22.12.0 || >=24.0.0';

/** The free space a VM needs where Vigil's files go: the central VM holds the store, a collector its spool. */
export const MIN_FREE_BYTES = { central: 1024 ** 3, collector: 256 * 1024 ** 2 } as const;

/** One line of the check table. `skip`: not checkable with this transport (counts as no failure). */
export interface CheckResult {
  readonly check: 'discovery' | 'authority' | 'ssh' | 'privileges' | 'service_manager' | 'node' | 'disk' | 'ports';
  readonly vm?: string;
  readonly status: 'pass' | 'fail' | 'skip';
  readonly detail: string;
}

/** Runs a shell script on a VM as the SSH login user (no sudo), for the checks; undefined with no remote shell. */
export type Probe = (vmId: string, script: string) => Promise<string>;

/** What the checks need: nothing here claims, writes or spends a token. */
export interface PreflightOptions {
  readonly client: AuthorityClient;
  readonly plan: InstallPlan;
  readonly vms: readonly InventoryVm[];
  /** The VMs to probe (the scope, or the part of it known before a recovery claim). */
  readonly probeVms: readonly string[];
  readonly probe: Probe | undefined;
  readonly serviceManager: 'systemd' | 'none';
  readonly centralPort: number;
  /** A busy central port is the deployment's own instance (recovery, resume): reported, not a failure. */
  readonly portMayBeOurs: boolean;
}

/** Whether `version` (`v22.12.0` or `22.12.0`) satisfies a range of `^x.y.z` and `>=x.y.z` joined by `||`. */
export function satisfiesEngines(version: string, range: string = NODE_ENGINES): boolean {
  const parse = (s: string) => /^v?(\d+)\.(\d+)\.(\d+)/.exec(s.trim())?.slice(1, 4).map(Number);
  const have = parse(version);
  if (!have) return false;
  const cmp = (a: number[], b: number[]) => a[0]! - b[0]! || a[1]! - b[1]! || a[2]! - b[2]!;
  return range.split('||').some((alt) => {
    const m = /^\s*(\^|>=)\s*(\S+)\s*$/.exec(alt);
    const want = m ? parse(m[2]!) : undefined;
    if (!m || !want) return false;
    return cmp(have, want) >= 0 && (m[1] === '>=' || have[0] === want[0]);
  });
}

/** The shell script one probe runs: `key=value` lines, read by `readProbe`. Every command is read-only. */
export function probeScript(root: string): string {
  const q = `'${root.replace(/'/g, `'\\''`)}'`;
  return [
    'echo "uid=$(id -u)"',
    'if sudo -n true >/dev/null 2>&1; then echo sudo=yes; else echo sudo=no; fi',
    'if [ -d /run/systemd/system ]; then echo systemd=yes; else echo systemd=no; fi',
    'echo "node=$(node --version 2>/dev/null)"',
    `d=${q}; while [ ! -e "$d" ]; do d=$(dirname "$d"); done; df -Pk -- "$d" | tail -n 1 | awk '{print "disk_kb=" $4}'`,
    'cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk \'$4 == "0A" {print "listen=" $2}\'',
  ].join('; ');
}

/** The facts a probe printed. */
export interface ProbeFacts {
  readonly uid: number | undefined;
  readonly sudo: boolean;
  readonly systemd: boolean;
  readonly node: string;
  readonly freeBytes: number | undefined;
  readonly listeningPorts: ReadonlySet<number>;
}

/** Reads the `key=value` lines of a probe (unknown lines ignored, so a chatty shell cannot break it). */
export function readProbe(out: string): ProbeFacts {
  const get = (k: string) =>
    out
      .split('\n')
      .find((l) => l.startsWith(`${k}=`))
      ?.slice(k.length + 1)
      .trim();
  const ports = new Set<number>();
  for (const l of out.split('\n')) {
    const m = /^listen=[0-9A-Fa-f:]+:([0-9A-Fa-f]{4})$/.exec(l.trim());
    if (m) ports.add(Number.parseInt(m[1]!, 16));
  }
  const uid = get('uid');
  const kb = get('disk_kb');
  return {
    uid: uid !== undefined && /^\d+$/.test(uid) ? Number(uid) : undefined,
    sudo: get('sudo') === 'yes',
    systemd: get('systemd') === 'yes',
    node: get('node') ?? '',
    freeBytes: kb !== undefined && /^\d+$/.test(kb) ? Number(kb) * 1024 : undefined,
    listeningPorts: ports,
  };
}

const mib = (n: number) => `${Math.round(n / 1024 ** 2)} MiB`;

/** The checks of one VM from its probe's facts. */
export function vmChecks(vm: InventoryVm, role: 'central' | 'collector', f: ProbeFacts, o: PreflightOptions) {
  const r = (check: CheckResult['check'], pass: boolean, detail: string): CheckResult => ({
    check,
    vm: vm.id,
    status: pass ? 'pass' : 'fail',
    detail,
  });
  const user = vm.sshUser ?? 'root';
  const min = MIN_FREE_BYTES[role];
  const out: CheckResult[] = [
    f.uid === 0
      ? r('privileges', true, `${user} is root`)
      : r(
          'privileges',
          f.sudo,
          f.sudo ? `${user} uses sudo (sudo -n true works)` : `${user} is not root and sudo -n true fails`,
        ),
    o.serviceManager === 'systemd'
      ? r('service_manager', f.systemd, f.systemd ? 'systemd runs' : 'no systemd here: use --service-manager none')
      : r('service_manager', true, `--service-manager none (systemd ${f.systemd ? 'present' : 'absent'})`),
    r(
      'node',
      satisfiesEngines(f.node),
      f.node ? `Node.js ${f.node} (needs ${NODE_ENGINES})` : `no node on the PATH (needs ${NODE_ENGINES})`,
    ),
    f.freeBytes === undefined
      ? r('disk', false, 'free space unknown (df gave nothing)')
      : r('disk', f.freeBytes >= min, `${mib(f.freeBytes)} free (needs ${mib(min)})`),
  ];
  if (role === 'central') {
    const busy = f.listeningPorts.has(o.centralPort);
    out.push(
      busy && o.portMayBeOurs
        ? r('ports', true, `port ${o.centralPort} in use (taken as the deployment's own instance, restarted)`)
        : r('ports', !busy, `port ${o.centralPort} ${busy ? 'is in use' : 'is free'}`),
    );
  }
  return out;
}

/**
 * Every check before a claim: discovery (done by the caller: its plan), the authority reachable (`GET /health`,
 * which spends nothing), and on each VM to probe, one SSH connection (host key held to the pin) whose read-only script
 * tells root or sudo, systemd, Node.js, free disk and, on the central VM, whether the port to listen on is free.
 */
export async function runPreflight(o: PreflightOptions): Promise<CheckResult[]> {
  const results: CheckResult[] = [
    { check: 'discovery', status: 'pass', detail: `${o.vms.length} VMs; scope ${o.plan.scope.vms.join(', ')}` },
  ];
  try {
    const health = await o.client.get<{ status?: string }>('/health');
    results.push({
      check: 'authority',
      status: health.status === 'ok' ? 'pass' : 'fail',
      detail: health.status === 'ok' ? 'reachable (GET /health)' : `GET /health answered ${JSON.stringify(health)}`,
    });
  } catch (err) {
    results.push({ check: 'authority', status: 'fail', detail: `unreachable: ${(err as Error).message}` });
  }
  const byId = new Map(o.vms.map((vm) => [vm.id, vm]));
  for (const vmId of o.probeVms) {
    const vm = byId.get(vmId);
    if (!vm) continue;
    const role = vmId === o.plan.scope.central_vm_id ? 'central' : 'collector';
    if (!o.probe) {
      results.push({ check: 'ssh', vm: vmId, status: 'skip', detail: 'directory transport: nothing to reach' });
      continue;
    }
    let out: string;
    try {
      out = await o.probe(vmId, probeScript(vm.prefix ?? '/'));
    } catch (err) {
      results.push({ check: 'ssh', vm: vmId, status: 'fail', detail: (err as Error).message.slice(0, 1500) });
      continue;
    }
    results.push({ check: 'ssh', vm: vmId, status: 'pass', detail: `reached ${vm.sshUser ?? 'root'}@${vm.address}` });
    results.push(...vmChecks(vm, role, readProbe(out), o));
  }
  return results;
}

/** The check results as a table for a person (stderr). */
export function formatChecks(results: readonly CheckResult[]): string {
  const vmWidth = Math.max(2, ...results.map((r) => (r.vm ?? '-').length));
  return [
    `${'check'.padEnd(15)}  ${'vm'.padEnd(vmWidth)}  result  detail`,
    ...results.map(
      (r) => `${r.check.padEnd(15)}  ${(r.vm ?? '-').padEnd(vmWidth)}  ${r.status.padEnd(6)}  ${r.detail}`,
    ),
  ].join('\n');
}

/** Checks failed: nothing was claimed (before a claim) or changed on any VM (after one). */
export class ChecksFailedError extends Error {
  override readonly name = 'ChecksFailedError';
  constructor(readonly results: readonly CheckResult[]) {
    const failed = results.filter((r) => r.status === 'fail');
    const what = failed.map((r) => `${r.check}${r.vm ? ` on ${r.vm}` : ''}`).join(', ');
    super(`${failed.length} check${failed.length === 1 ? '' : 's'} failed: ${what}`);
  }
}
