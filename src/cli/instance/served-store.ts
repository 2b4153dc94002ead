import type { Detector } from '../../commands/alerting/detection-step.js';
import type { Transparency } from '../../log/checkpointer.js';
import type { WriteModels } from '../../projections/models.js';
import type { Config } from '../../services/config-schema.js';
import { startInstanceCheckpointer } from './checkpoints.js';
import { openInstanceSigner } from './head-signing.js';
import { READ_SIDE_HALT_MS } from './fatal-exit.js';
import type { JetStreamNode } from './jetstream-node.js';
import { openInstanceStore, storeOptions, type InstanceStore, type OpenOptions } from './open.js';
import { createStopList, type StopList } from './stop-list.js';

/** The module of a JetStream node (src/cli/instance/jetstream-node.ts), loaded only for a JetStream backend. */
export type JetStreamModule = typeof import('./jetstream-node.js');

/** The store of a serving instance, opened with its checkpointer and, on a JetStream node, the node. */
export interface ServedStore {
  readonly instance: InstanceStore;
  readonly transparency: Transparency;
  readonly cluster: JetStreamModule | undefined;
  readonly jetstream: JetStreamNode | undefined;
  /** What has started so far (the store first), for a start-up failure and the stop to stop, the last first. */
  readonly parts: StopList;
  /** Stops what has started, then the node's connection, and throws `err` said as a refusal to start. */
  failed(err: unknown): Promise<never>;
}

/**
 * Opens the store of `vigil serve` (on a JetStream node, once connected to the stream) and starts signing its
 * checkpoints; `late.haltReadSide` is set once the store is open, for the fatal path.
 */
export async function openServedStore(
  config: Config,
  onFatal: (err: Error) => void,
  late: { haltReadSide?: () => Promise<boolean> },
  log: (line: Record<string, unknown>) => void,
  detector: Detector<WriteModels>,
): Promise<ServedStore> {
  const { cluster, jetstream, refusal } = await connectNode(config, log);
  const parts = createStopList();
  const failed = async (err: unknown): Promise<never> => {
    await parts.stopAll();
    await jetstream?.close();
    throw refusal(err);
  };
  const options = servedOptions(config, onFatal, jetstream, log);
  const signer = await openInstanceSigner(config, log).catch(failed);
  const instance = await openInstanceStore(config.storage.path, { ...options, detector, signer }).catch(failed);
  parts.push(() => instance.close());
  // Recorded in the log by openInstanceStore; said here too, for the operator.
  const resumed = await instance.log.signing;
  if (resumed?.rewound)
    log({ level: 'warn', msg: 'the signer gave up heads past the last commit', ...resumed.rewound });
  late.haltReadSide = () => instance.readSide.halt(READ_SIDE_HALT_MS);
  const transparency = await startInstanceCheckpointer(instance, config).catch(failed);
  parts.push(() => transparency.stop());
  return { instance, transparency, cluster, jetstream, parts, failed };
}

/**
 * Loads and connects the JetStream side of a node whose log is a JetStream stream, and says how a start-up step's
 * failure is told (`refusal`); on a single node there is no node, and a failure is told as it is.
 */
async function connectNode(config: Config, log: (line: Record<string, unknown>) => void) {
  // On a JetStream node a start-up step the stream does not answer is said as a refusal with what to do.
  // The NATS client modules load only for a JetStream backend: the default single-node path never loads them.
  const cluster = config.storage.backend === 'jetstream' ? await import('./jetstream-node.js') : undefined;
  const refusal = (err: unknown) =>
    cluster && err instanceof Error ? cluster.unanswered(config.storage.jetstream?.stream ?? '(unnamed)', err) : err;
  const jetstream = cluster
    ? await cluster.connectJetStreamNode(config, log).catch((err: unknown) => {
        throw refusal(err);
      })
    : undefined;
  return { cluster, jetstream, refusal };
}

/** The store options of a serving instance: a storage failure is fatal, a read side's failure is logged. */
function servedOptions(
  config: Config,
  onFatal: (err: Error) => void,
  node: Pick<JetStreamNode, 'openLog'> | undefined,
  log: (line: Record<string, unknown>) => void,
): OpenOptions {
  // Only a serving instance lowers its read side: there it shares the CPU with ingest, and the
  // writer, which acknowledges evidence, goes first (one-shot commands such as replay wait for both).
  return {
    ...storeOptions(config),
    readSideNice: config.limits.readSideNice,
    onFatal,
    ...(node ? { openLog: node.openLog } : {}),
    onReadSideFailure: (message: string) =>
      log({
        level: 'error',
        msg: 'the read side failed: reads are answered 503 until vigil serve is restarted',
        error: message,
      }),
  };
}
