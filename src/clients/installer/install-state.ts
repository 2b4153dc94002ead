import { existsSync, readFileSync } from 'node:fs';
import * as v from 'valibot';
import { formatIssues } from '../../kernel/issues.js';
import { ensureSecretDir, secretFileProblem, writeSecretFile } from '../../kernel/secret-files.js';

const Str = v.pipe(v.string(), v.maxLength(65_536));

/** How far each VM got: files staged beside the live ones, switched into place, service started. */
export const VmStep = v.picklist(['staged', 'switched', 'started']);

/**
 * What an installer run keeps so that `--resume` continues the same session without a new token, and `--abandon`
 * can give it up: the session and its token, the identity key, the provisioning once proven, and each VM's step.
 * It holds secrets (session token, identity key, enrollment tokens): 0600 in a 0700 folder.
 */
export const InstallStateSchema = v.strictObject({
  version: v.literal(1),
  status: v.picklist(['running', 'awaiting_services', 'awaiting_snapshot', 'completed', 'abandoned']),
  setupUrl: Str,
  recovery: v.boolean(),
  sessionId: Str,
  sessionToken: Str,
  challenge: Str,
  deploymentId: Str,
  scope: v.strictObject({ central_vm_id: Str, vms: v.pipe(v.array(Str), v.maxLength(256)) }),
  identity: v.strictObject({ publicPem: Str, privatePem: Str }),
  proven: v.optional(
    v.strictObject({
      provisioning: v.looseObject({ deployment_id: Str }),
      fleetPublicKey: Str,
      collectorTokens: v.record(Str, Str),
    }),
  ),
  bootstrapKeyPublished: v.boolean(),
  phases: v.array(Str),
  vms: v.record(Str, VmStep),
});

/** The installer's state. */
export type InstallState = v.InferOutput<typeof InstallStateSchema>;

/** Where a run's state lives and how it is read and written (a file for the CLI, memory for tests). */
export interface StateStore {
  readonly path: string;
  load(): InstallState | undefined;
  save(state: InstallState): void;
}

/** The state file `<work-dir>/install-state.json`: written 0600 in a 0700 folder, refused when readable by others. */
export function fileStateStore(path: string): StateStore {
  return {
    path,
    load() {
      if (!existsSync(path)) return undefined;
      const problem = secretFileProblem(path);
      if (problem) throw new Error(`refusing ${path}: ${problem}`);
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        throw new Error(`cannot read the installer state ${path}: ${(err as Error).message}`);
      }
      const parsed = v.safeParse(InstallStateSchema, raw);
      if (!parsed.success)
        throw new Error(`invalid installer state ${path}:\n  ${formatIssues(parsed.issues).join('\n  ')}`);
      return parsed.output;
    },
    save(state) {
      ensureSecretDir(path);
      const problem = secretFileProblem(path);
      if (problem) throw new Error(`refusing to keep the installer state there: ${problem}`);
      writeSecretFile(path, `${JSON.stringify(state, null, 2)}\n`);
    },
  };
}

/** Whether a state is of a run that can still go on (`--resume`) or be given up (`--abandon`). */
export function isUnfinished(s: InstallState): boolean {
  return s.status !== 'completed' && s.status !== 'abandoned';
}
