import { openCredentialRegistry, type Credential, type CredentialRegistry } from '../../auth/registry.js';
import type { Pipeline } from '../../commands/pipeline.js';
import type { WriteModels } from '../../projections/models.js';
import { recordCredentialChanges } from './credential-recorder.js';
import type { JetStreamNode } from './jetstream-node.js';

/** The credentials file as a serving instance follows it: the registry requests authenticate with, and its changes. */
export interface CredentialsWatch {
  readonly registry: CredentialRegistry;
  /** Records what changed in the file as last loaded (on a JetStream node only while it leads). */
  recordChanges(): void;
  /** Stops checking the file. */
  stop(): void;
}

/**
 * Opens the credentials registry at `path` and records its changes through `pipeline`: at once, each time the file
 * changes, and (through `recordChanges`) each time `node` starts leading.
 */
export function watchCredentials(
  path: string,
  pipeline: Pipeline<WriteModels>,
  node: Pick<JetStreamNode, 'leadership'> | undefined,
  log: (line: Record<string, unknown>) => void,
): CredentialsWatch {
  // The CLI writes the credentials file; the service records what changed in it when it loads it,
  // so the log keeps one writer. The file is checked every second even when no request comes.
  // On a JetStream node only the leader records them, again each time a node starts leading.
  let loadedCredentials: readonly Credential[] | undefined;
  const recordChanges = () => {
    if (!loadedCredentials || (node && !node.leadership().leading)) return;
    recordCredentialChanges(pipeline, loadedCredentials, new Date().toISOString()).then(
      (changes) => {
        if (changes > 0) log({ level: 'info', msg: 'credential registry changes recorded', changes });
      },
      (err: unknown) =>
        log({ level: 'error', msg: 'credential registry changes not recorded', error: (err as Error).message }),
    );
  };
  const onLoaded = (credentials: readonly Credential[]) => {
    loadedCredentials = credentials;
    recordChanges();
  };
  const registry = openCredentialRegistry(path, (message) => log({ level: 'error', msg: message }), 500, onLoaded);
  registry.size();
  const registryPoll = setInterval(() => registry.size(), 1000);
  registryPoll.unref();
  return { registry, recordChanges, stop: () => clearInterval(registryPoll) };
}
