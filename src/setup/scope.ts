import * as v from 'valibot';

/** The most VMs one installation scope may hold (spec 8 leaves the bound to us). */
export const MAX_SCOPE_VMS = 256;

/** A VM identifier: the provider's instance id or name, 1-128 of letters, digits, `. _ @ -`. */
export const VmId = v.pipe(
  v.string(),
  v.regex(
    /^[A-Za-z0-9][A-Za-z0-9._@-]{0,127}$/,
    'expected a VM id of 1-128 characters: letters, digits, . _ @ - (not starting with a symbol)',
  ),
);

/** `installation_scope` as sent in a claim: the central VM and a bounded, unique `vms` list holding it. */
export const InstallationScopeSchema = v.pipe(
  v.strictObject({
    central_vm_id: VmId,
    vms: v.pipe(
      v.array(VmId),
      v.minLength(1, 'vms must list at least the central VM'),
      v.maxLength(MAX_SCOPE_VMS, `vms holds at most ${MAX_SCOPE_VMS} entries`),
    ),
  }),
  v.check(
    (s) => new Set(s.vms.map((id) => id.toLowerCase())).size === s.vms.length,
    'vms must be unique (ids are compared case-insensitively)',
  ),
  v.check((s) => s.vms.includes(s.central_vm_id), 'central_vm_id must be one of vms'),
);

/** A normalized installation scope: `vms` sorted (code-point order), central VM included. */
export interface InstallationScope {
  central_vm_id: string;
  vms: string[];
}

/** Normalizes a validated scope: the `vms` list in ascending code-point order. */
export function normalizeScope(scope: v.InferOutput<typeof InstallationScopeSchema>): InstallationScope {
  return { central_vm_id: scope.central_vm_id, vms: [...scope.vms].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
}

/** Whether `requested` asks for nothing beyond `approved` (same central VM, vms a subset). */
export function withinScope(requested: InstallationScope, approved: InstallationScope): boolean {
  const allowed = new Set(approved.vms);
  return requested.central_vm_id === approved.central_vm_id && requested.vms.every((id) => allowed.has(id));
}
