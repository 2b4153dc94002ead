import { readFileSync } from 'node:fs';
import { posix } from 'node:path';
import * as v from 'valibot';
import { formatIssues } from '../../kernel/issues.js';
import { VmId } from '../../setup/scope.js';

/** An OpenSSH public key line (`type base64 [comment]`). */
export const SSH_PUBLIC_KEY =
  /^(ssh-ed25519|ecdsa-sha2-nistp(256|384|521)|ssh-rsa) [A-Za-z0-9+/]+={0,3}( [^\n]{0,256})?$/;

/** One VM as an inventory provider describes it. */
export const InventoryVmSchema = v.strictObject({
  id: VmId,
  name: v.optional(v.pipe(v.string(), v.maxLength(256))),
  os: v.picklist(['linux', 'windows', 'other']),
  /** Where the transport reaches it (host name or address); never defaulted to this host. */
  address: v.optional(
    v.pipe(
      v.string(),
      v.minLength(1),
      v.maxLength(255),
      v.regex(/^[A-Za-z0-9.:_][A-Za-z0-9.:_-]*$/, 'expected a host name or IP address'),
    ),
  ),
  sshUser: v.optional(v.pipe(v.string(), v.regex(/^[a-z_][a-z0-9_-]{0,31}$/, 'expected a POSIX user name'))),
  sshPort: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))),
  /**
   * The VM's SSH host key (`ssh-ed25519 AAAA...`, as in its /etc/ssh/ssh_host_*_key.pub): pinned, never trusted on
   * first use.
   */
  sshHostKey: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(8192),
      v.regex(SSH_PUBLIC_KEY, 'expected an OpenSSH public key line: type and base64 key'),
    ),
  ),
  /** Where Vigil's files go on the VM (default `/`): every path the installer writes is below it. */
  prefix: v.optional(
    v.pipe(
      v.string(),
      v.maxLength(1024),
      v.check(
        (p) => p.startsWith('/') && posix.normalize(p) === p && !p.includes('\u0000'),
        'expected a normalized absolute path',
      ),
    ),
  ),
  tags: v.optional(v.pipe(v.array(v.pipe(v.string(), v.maxLength(64))), v.maxLength(32)), []),
  /** false keeps a discovered VM out of the proposed scope. */
  install: v.optional(v.boolean(), true),
});

/** One inventory VM. */
export type InventoryVm = v.InferOutput<typeof InventoryVmSchema>;

/** A read-only source of VMs (a cloud API, a CMDB, a file): discovery never changes anything. */
export interface InventoryProvider {
  readonly name: string;
  list(): Promise<readonly InventoryVm[]>;
}

const InventoryFileSchema = v.strictObject({ vms: v.pipe(v.array(InventoryVmSchema), v.maxLength(10_000)) });

/** The static inventory provider: a JSON file `{vms: [...]}` (read, never written). */
export function staticInventoryProvider(path: string): InventoryProvider {
  return {
    name: `static:${path}`,
    async list() {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        throw new Error(`cannot read inventory ${path}: ${(err as Error).message}`);
      }
      const parsed = v.safeParse(InventoryFileSchema, raw);
      if (!parsed.success) throw new Error(`invalid inventory ${path}:\n  ${formatIssues(parsed.issues).join('\n  ')}`);
      const ids = new Set<string>();
      for (const vm of parsed.output.vms) {
        if (ids.has(vm.id.toLowerCase())) throw new Error(`invalid inventory ${path}: VM ${vm.id} is listed twice`);
        ids.add(vm.id.toLowerCase());
      }
      return parsed.output.vms;
    },
  };
}

/** The tag that designates central-VM candidates. */
export const CENTRAL_TAG = 'vigil:central';

/**
 * Selects the central VM deterministically: among VMs to install that run Linux, those tagged
 * `vigil:central` if any, else all of them; the one whose id is first in code-point order.
 */
export function selectCentral(vms: readonly InventoryVm[]): InventoryVm {
  const linux = vms.filter((vm) => vm.install && vm.os === 'linux');
  const tagged = linux.filter((vm) => vm.tags.includes(CENTRAL_TAG));
  const pool = tagged.length > 0 ? tagged : linux;
  const chosen = [...pool].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))[0];
  if (!chosen) throw new Error('no Linux VM to install on: the central VM must run Linux');
  return chosen;
}
