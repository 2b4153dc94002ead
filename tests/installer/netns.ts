import { spawnSync } from 'node:child_process';

/** One network namespace standing in for a VM: its own network stack, reached from the root namespace over a veth pair. */
export interface TestNamespace {
  /** `vigil-t<pid>-<i>`: the name `ip netns exec` takes. */
  readonly name: string;
  /** The namespace side of the veth pair (10.231.<n>.2): where the VM's sshd listens. */
  readonly address: string;
  /** The root side of the veth pair (10.231.<n>.1): the orchestration host as the VM sees it. */
  readonly hostAddress: string;
}

export interface TestNamespaces {
  readonly namespaces: readonly TestNamespace[];
  /** Deletes every namespace and veth made here (idempotent; also run when the process exits). */
  cleanup(): void;
}

function ip(args: readonly string[]): { ok: boolean; out: string } {
  const r = spawnSync('ip', args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}`.trim() };
}

/** The third octets of 10.231.<n>.0 already on an interface of the root namespace (another run, a leftover). */
function usedSubnets(): Set<number> {
  const used = new Set<number>();
  for (const m of ip(['-o', '-4', 'addr', 'show']).out.matchAll(/inet 10\.231\.(\d+)\./g)) used.add(Number(m[1]));
  return used;
}

/** Whether process `pid` still exists (a namespace named after a dead test process is a leftover of a killed run). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes the namespaces and veths of test processes that died without cleaning up (SIGKILL skips `exit`). */
function removeLeftovers(): void {
  for (const m of ip(['netns', 'list']).out.matchAll(/^vigil-t(\d+)-(\w+)/gm)) {
    if (Number(m[1]) === process.pid || alive(Number(m[1]))) continue;
    ip(['link', 'delete', `vt${m[1]}-${m[2]}`]);
    ip(['netns', 'delete', m[0]]);
  }
}

/**
 * Why namespaces cannot be made here (not root, no `ip`, or the kernel or the container refuses `ip netns add`),
 * or undefined when they can: for `it(..., { skip })`. It makes and deletes one probe namespace.
 */
export function namespacesUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root (ip netns add): not root';
  const name = `vigil-t${process.pid}-probe`;
  const added = ip(['netns', 'add', name]);
  if (!added.ok) return `ip netns add fails here: ${added.out || 'no output'}`;
  ip(['netns', 'delete', name]);
  return undefined;
}

/**
 * Makes `count` namespaces `vigil-t<pid>-<i>`, each with `lo` up and a veth pair: root side `vt<pid>-<i>` at
 * 10.231.<n>.1/30, namespace side at 10.231.<n>.2/30, both up (n: the i-th third octet no interface of the root
 * namespace holds yet, so parallel runs do not collide). A failure half-way removes what was made; namespaces left by
 * a test process that no longer exists are removed first.
 * Namespaces isolate the network only: every process in them still sees the same file system.
 */
export function makeNamespaces(count: number): TestNamespaces {
  const made: Array<{ name: string; veth: string }> = [];
  let cleaned = false;
  const cleanup = () => {
    if (cleaned) return;
    cleaned = true;
    process.removeListener('exit', cleanup);
    // Deleting the root side of a veth deletes its peer; deleting a namespace kills nothing but frees its interfaces.
    for (const { name, veth } of made.reverse()) {
      ip(['link', 'delete', veth]);
      ip(['netns', 'delete', name]);
    }
  };
  process.once('exit', cleanup);
  removeLeftovers();
  const used = usedSubnets();
  const namespaces: TestNamespace[] = [];
  try {
    for (let i = 0, n = 0; i < count; i += 1, n += 1) {
      while (used.has(n)) n += 1;
      if (n > 255) throw new Error('no free 10.231.<n>.0/30 subnet left');
      const name = `vigil-t${process.pid}-${i}`;
      const veth = `vt${process.pid}-${i}`;
      const peer = `vn${process.pid}-${i}`;
      const hostAddress = `10.231.${n}.1`;
      const address = `10.231.${n}.2`;
      const steps: string[][] = [
        ['netns', 'add', name],
        ['netns', 'exec', name, 'ip', 'link', 'set', 'lo', 'up'],
        ['link', 'add', veth, 'type', 'veth', 'peer', 'name', peer],
        ['link', 'set', peer, 'netns', name],
        ['addr', 'add', `${hostAddress}/30`, 'dev', veth],
        ['link', 'set', veth, 'up'],
        ['netns', 'exec', name, 'ip', 'addr', 'add', `${address}/30`, 'dev', peer],
        ['netns', 'exec', name, 'ip', 'link', 'set', peer, 'up'],
      ];
      for (const [k, step] of steps.entries()) {
        const r = ip(step);
        if (k === 0 && r.ok) made.push({ name, veth });
        if (!r.ok) throw new Error(`ip ${step.join(' ')} failed: ${r.out}`);
      }
      namespaces.push({ name, address, hostAddress });
    }
  } catch (e) {
    cleanup();
    throw e;
  }
  return { namespaces, cleanup };
}
