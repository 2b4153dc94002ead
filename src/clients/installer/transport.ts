import { appendFileSync, chmodSync, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';

/** Every action the installer takes on a VM goes through one transport. */
export interface VmTransport {
  /** Where the installed files live on the VM (`/` on a real VM). */
  root(vmId: string): string;
  /** Writes a file (parents created 0700) with the given mode; `path` is absolute on the VM. */
  writeFile(vmId: string, path: string, content: string, mode: number): Promise<void>;
  /** Creates a directory (and parents) with the given mode. */
  makeDir(vmId: string, path: string, mode: number): Promise<void>;
  /** Runs a command (argv, never a shell string) on the VM and returns its standard output; a failure throws. */
  run(vmId: string, argv: readonly string[]): Promise<string>;
  /** Reads back the permission bits of files as they are on the VM (absent ones are left out). */
  modes(vmId: string, paths: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** Renames staged files into place, in order, each an atomic rename on the VM's file system. */
  rename(vmId: string, moves: readonly (readonly [from: string, to: string])[]): Promise<void>;
}

/** An action on a VM outside the approved scope: refused before anything happens. */
export class ScopeViolationError extends Error {
  override readonly name = 'ScopeViolationError';
}

/** Refuses a path that is not absolute or that climbs out with `..`. */
function checkPath(path: string): void {
  if (!path.startsWith('/') || posix.normalize(path) !== path || path.includes('\u0000'))
    throw new Error(`refusing path ${JSON.stringify(path)}: expected a normalized absolute path`);
}

/**
 * Guards a transport with the `vms` list the authority returned: any other target (including the
 * orchestration host, which is never implicit) is refused. `touched` records every VM acted on.
 */
export function guardedTransport(
  inner: VmTransport,
  approved: readonly string[],
): VmTransport & { readonly touched: ReadonlySet<string> } {
  const allowed = new Set(approved);
  const touched = new Set<string>();
  const check = (vmId: string) => {
    if (!allowed.has(vmId))
      throw new ScopeViolationError(`refusing to act on ${vmId}: it is not in the approved installation scope`);
    touched.add(vmId);
  };
  return {
    touched,
    root: (vmId) => {
      check(vmId);
      return inner.root(vmId);
    },
    async writeFile(vmId, path, content, mode) {
      check(vmId);
      checkPath(path);
      await inner.writeFile(vmId, path, content, mode);
    },
    async makeDir(vmId, path, mode) {
      check(vmId);
      checkPath(path);
      await inner.makeDir(vmId, path, mode);
    },
    async run(vmId, argv) {
      check(vmId);
      return inner.run(vmId, argv);
    },
    async modes(vmId, paths) {
      check(vmId);
      paths.forEach(checkPath);
      return inner.modes(vmId, paths);
    },
    async rename(vmId, moves) {
      check(vmId);
      moves.flat().forEach(checkPath);
      await inner.rename(vmId, moves);
    },
  };
}

/**
 * A staging transport: each VM is the directory `<base>/<vmId>`; files land under it and commands
 * are appended to its `var/log/vigil-installer/commands.jsonl` instead of being executed.
 */
export function directoryTransport(base: string): VmTransport {
  const root = (vmId: string) => join(base, vmId);
  return {
    root,
    async writeFile(vmId, path, content, mode) {
      const full = join(root(vmId), path);
      mkdirSync(dirname(full), { recursive: true, mode: 0o700 });
      writeFileSync(full, content, { mode });
      chmodSync(full, mode);
    },
    async makeDir(vmId, path, mode) {
      const full = join(root(vmId), path);
      mkdirSync(full, { recursive: true, mode });
      chmodSync(full, mode);
    },
    async run(vmId, argv) {
      const log = join(root(vmId), 'var', 'log', 'vigil-installer', 'commands.jsonl');
      mkdirSync(dirname(log), { recursive: true, mode: 0o700 });
      appendFileSync(log, `${JSON.stringify({ argv })}\n`, { mode: 0o600 });
      return '';
    },
    async modes(vmId, paths) {
      const found = new Map<string, number>();
      for (const p of paths) {
        const full = join(root(vmId), p);
        if (existsSync(full)) found.set(p, statSync(full).mode & 0o7777);
      }
      return found;
    },
    async rename(vmId, moves) {
      for (const [from, to] of moves) renameSync(join(root(vmId), from), join(root(vmId), to));
    },
  };
}
