import { openEventStore, type EventStore, type LogOpener } from '../../commands/event-store.js';
import type { DetectionSettings } from '../../commands/alerting/evaluate.js';
import { foldFromCutOffThread } from '../../projections/refold.js';
import { HEAP_PROJECTIONS, INDEX_PROJECTIONS, readProjections } from '../../projections/all.js';
import { DEFAULT_GRAPH_LIMITS, type GraphLimits } from '../../projections/graph.js';
import { readsOf, writeModelsOf, type Reads, type WriteModels } from '../../projections/models.js';
import { createPipeline, type Pipeline } from '../../commands/pipeline.js';
import { instanceDetector, type Detector } from '../../commands/alerting/detection-step.js';
import { startReadSide, type ReadSide } from '../../projections/read-side/read-side.js';
import type { Config } from '../../services/config-schema.js';
import type { HeadSigner } from '../../log/head-signer.js';
import type { LmdbEventLog } from '../../log/lmdb-log.js';
import { rotationsTo } from '../../log/key-rotation.js';

/** Detection defaults: alerts sharing a system within an hour join one incident. */
export const DEFAULT_DETECTION: DetectionSettings = { incidentWindowMs: 60 * 60 * 1000 };

/**
 * An opened instance store: the log, the single writer with the write side's models (what
 * decisions need), and the read side folded behind it in a worker thread (events by time and
 * dimension, the audit trail, the graph).
 */
export interface InstanceStore extends EventStore<WriteModels> {
  readonly readSide: ReadSide;
  /** The one write pipeline: every write is dispatched through it, with detection on its evidence. */
  readonly pipeline: Pipeline<WriteModels>;
  /** Everything queries read: the write side's models and the read side's databases. */
  readonly reads: Reads;
  /** Resolves once the read side has folded the log head as it is now (read-your-writes). */
  readYourWrites(timeoutMs?: number): Promise<void>;
}

/** Databases of the main environment that older versions kept there and the read side now keeps. */
const MOVED_TO_READ_SIDE = ['ev-time', 'ev-dim', 'audit'];

/** Options for opening the store. */
export interface OpenOptions {
  /** Detection settings (incident window); defaults apply when absent. */
  readonly detection?: DetectionSettings;
  /** The detector of every batch (`vigil serve` gives one counting rule costs under the configured budget). */
  readonly detector?: Detector<WriteModels>;
  readonly checkpointEvery?: number;
  /** How much of the graph is kept in memory; defaults apply when absent. */
  readonly graph?: GraphLimits;
  /** Called when a write's outcome is unknown (I/O failure): the process must stop. */
  readonly onFatal?: (err: Error) => void;
  /** Opens the log (LMDB unless given: a JetStream node passes its opener). */
  readonly openLog?: LogOpener;
  /**
   * How much lower than the writer the read side's thread is scheduled (src/projections/read-side/read-side.ts); 0 when
   * absent.
   */
  readonly readSideNice?: number;
  /** Called when the read side's worker fails: reads are answered 503 from then on. */
  readonly onReadSideFailure?: (message: string) => void;
  /** Signs the head of every commit; a store with an unattested tail is then refused (UnattestedTailError). */
  readonly signer?: HeadSigner;
}

/** The store options a configuration asks for (detection settings, graph limits). */
export function storeOptions(config: Config): OpenOptions {
  return {
    detection: { incidentWindowMs: config.detection.incidentWindowMinutes * 60_000 },
    graph: { entities: config.limits.graphEntities, relationships: config.limits.graphRelationships },
  };
}

/**
 * Records that the signer gave up heads it had signed past the store's last commit, when it did on
 * taking the store up (src/log/head-keeper.ts): the writer stopped between a signature and its
 * commit, and the log says so, as the signer's journal does.
 */
export async function recordRewind(log: LmdbEventLog, pipeline: Pipeline<WriteModels>): Promise<void> {
  const resumed = await log.signing;
  if (resumed?.rewound)
    await pipeline.record([{ type: 'SignedHeadsRewound', data: resumed.rewound }], {
      now: new Date().toISOString(),
      actor: { id: 'vigil', authentication: 'service' },
    });
}

/**
 * Records the key rotations the signer reported on taking the store up that the log does not hold yet
 * (`recorded`: the notes of its `LogKeyRotated` records), in order: a signer rotated while the writer was
 * away (`vigil signer rotate`, or `vigil log rotate-key` stopped before it recorded it) is said in the log
 * once, signed by the new key (docs/log.md, "Rotating the signing key").
 */
export async function recordRotations(
  log: LmdbEventLog,
  pipeline: Pipeline<WriteModels>,
  recorded: readonly string[],
): Promise<void> {
  const resumed = await log.signing;
  // Only notes that check and lead to the signer's key are recorded (src/log/key-rotation.ts).
  const chain = log.signer && resumed?.rotations ? rotationsTo(log.signer.verifier, resumed.rotations) : [];
  const missing = chain.filter((note) => !recorded.includes(note));
  if (missing.length > 0)
    await pipeline.record(
      missing.map((note) => ({ type: 'LogKeyRotated', data: { note } })),
      { now: new Date().toISOString(), actor: { id: 'vigil', authentication: 'service' } },
    );
}

/** Opens the instance store at `path`: every read model, and detections on every batch's evidence. */
export async function openInstanceStore(path: string, opts: OpenOptions = {}): Promise<InstanceStore> {
  const es = await openEventStore(path, {
    models: writeModelsOf,
    projections: HEAP_PROJECTIONS,
    indexes: INDEX_PROJECTIONS,
    ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
    ...(opts.onFatal ? { onFatal: opts.onFatal } : {}),
    ...(opts.openLog ? { openLog: opts.openLog } : {}),
    ...(opts.signer ? { signer: opts.signer } : {}),
    // The worker folds HEAP_PROJECTIONS, the projections passed here.
    foldFromCut: (firstSeq) => foldFromCutOffThread(path, firstSeq),
  });
  const graph = opts.graph ?? DEFAULT_GRAPH_LIMITS;
  const read = readProjections(graph);
  const readDbs = new Set(read.indexes.flatMap((ix) => ix.dbs));
  let readSide: ReadSide;
  try {
    for (const name of MOVED_TO_READ_SIDE) {
      const db = es.store.db(name);
      if (db.getKeysCount({ limit: 1 }) > 0) await es.log.commit(() => db.clearSync());
    }
    readSide = await startReadSide({
      storePath: path,
      graph,
      dbs: [...readDbs],
      binaryDbs: read.indexes.flatMap((ix) => [...(ix.binaryDbs ?? []), ...(ix.keyOnlyDbs ?? [])]),
      ...(opts.checkpointEvery ? { checkpointEvery: opts.checkpointEvery } : {}),
      ...(opts.readSideNice ? { nice: opts.readSideNice } : {}),
      ...(opts.onReadSideFailure ? { onFailure: opts.onReadSideFailure } : {}),
    });
  } catch (err) {
    await es.close();
    throw err;
  }
  const stopFollowing = es.log.follow(es.log.head().seq, (r) => readSide.notify(r.seq));
  const runtime = es.runtime;
  const reads = readsOf(runtime, {
    index: runtime.index,
    db: (name) => (readDbs.has(name) ? readSide.db(name) : runtime.db(name)),
    seq: () => readSide.applied(),
    record: (seq) => runtime.record(seq),
  });
  let closed = false;
  const pipeline = createPipeline(es.writer, opts.detector ?? instanceDetector(opts.detection ?? DEFAULT_DETECTION));
  await recordRewind(es.log, pipeline);
  await recordRotations(
    es.log,
    pipeline,
    es.writer.models.keyRotations.rotations.map((r) => r.note),
  );
  return {
    ...es,
    readSide,
    reads,
    pipeline,
    readYourWrites: (timeoutMs) => readSide.caughtUp(es.log.head().seq, timeoutMs),
    async close() {
      if (closed) return;
      closed = true;
      stopFollowing();
      await readSide.close();
      await es.close();
    },
  };
}
