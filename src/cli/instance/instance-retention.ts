import type { Pipeline } from '../../commands/pipeline.js';
import type { Transparency } from '../../log/checkpointer.js';
import type { WriteModels } from '../../projections/models.js';
import type { Config } from '../../services/config-schema.js';
import type { Exports } from '../../services/export/start.js';
import { archiveDirOf } from '../../services/retention/expire.js';
import { startRetention, type RetentionRunner } from '../../services/retention/scheduler.js';
import type { JetStreamNode } from './jetstream-node.js';
import type { InstanceStore } from './open.js';

/**
 * Starts retention as `vigil serve` runs it: `onLeader` records the policy and the cuts, and a record expires only
 * once every export destination has delivered it.
 */
export function startInstanceRetention(
  config: Config,
  instance: InstanceStore,
  onLeader: Pipeline<WriteModels>,
  transparency: Transparency,
  jetstream: JetStreamNode | undefined,
  exports: Exports,
  log: (line: Record<string, unknown>) => void,
): Promise<RetentionRunner> {
  // Expiry waits for every export destination: a record leaves the live store only once delivered.
  return startRetention(
    {
      // On a JetStream node only the leader records the policy in force and expires segments (archiving
      // them on its machine); it completes a purge its predecessor left undone before each run.
      log: instance.log,
      pipeline: onLeader,
      carried: instance.carried,
      checkpoints: transparency,
      origin: transparency.verifier.name,
      ...(jetstream
        ? {
            node: jetstream.name,
            leads: () => jetstream.leadership().leading,
            beforeRun: async () => {
              await jetstream.log()?.purgeBelowCut();
            },
          }
        : {}),
      settings: config.retention,
      archiveDir: archiveDirOf(config.retention, config.storage.path),
      storePath: config.storage.path,
      delivered: () => Math.min(Infinity, ...exports.status().map((d) => d.cursor)),
    },
    () => new Date(),
    log,
  );
}
