import { createHash } from 'node:crypto';
import type { Config } from '../../services/config-schema.js';
import { logCursor } from '../../services/export/cursor.js';
import {
  exportsWhileLeading,
  startExports,
  type ExportDeps,
  type Exports,
  type LeaderExports,
} from '../../services/export/start.js';
import { followCut } from '../../services/retention/follow-cut.js';
import type { JetStreamNode } from './jetstream-node.js';
import type { InstanceStore } from './open.js';

/**
 * Starts export and the start-up writes of a serving instance: on a single node the writes, then export; on a
 * JetStream node, the node, which runs both each time it starts leading. `origin` names the log (its checkpoint key).
 */
export async function startInstanceExports(
  config: Config,
  origin: string,
  instance: InstanceStore,
  node: JetStreamNode | undefined,
  startupWrites: () => Promise<void>,
  log: (line: Record<string, unknown>) => void,
): Promise<Exports> {
  const deps: ExportDeps = {
    storePath: config.storage.path,
    origin,
    log: instance.log,
    pipeline: instance.pipeline,
    logLine: log,
  };
  if (node) return startNode(node, instance, config, deps, startupWrites, log);
  await startupWrites();
  return startExports(config.export, deps);
}

/** Starts a JetStream node with export on its leader, stopping that export again when the node fails to start. */
async function startNode(
  node: JetStreamNode,
  instance: InstanceStore,
  config: Config,
  deps: ExportDeps,
  startupWrites: () => Promise<void>,
  log: (line: Record<string, unknown>) => void,
): Promise<LeaderExports> {
  // On a JetStream node export runs on the leader only, from the cursors the log records; items are
  // named by the stream (the same on every node), so a receiver deduplicates a batch sent again. The
  // stream's creation time tells apart two deployments that use the same stream name (the default
  // VIGIL_LOG) and a stream recreated under its old name, whose sequences start again at 1.
  const streamId = createHash('sha256').update(node.streamCreated).digest('hex').slice(0, 32);
  const exports = exportsWhileLeading(config.export, {
    ...deps,
    origin: `vigil.stream/${node.conn.stream}/${streamId}`,
    cursorOf: (name) => logCursor(instance.pipeline, name, Date.now, log),
  });
  await node
    .start(
      instance.runtime,
      async () => {
        await startupWrites();
        await exports.lead();
      },
      () => exports.follow(),
      followCut(instance.runtime, instance.log),
    )
    .catch(async (err: unknown) => {
      await exports.stop();
      throw err;
    });
  return exports;
}
