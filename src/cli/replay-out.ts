import { chmodSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError } from './cli-error.js';
import { decodeForReadSide, decodeForWriteSide } from '../log/evidence-fields.js';
import { openStoreSnapshot, type StoreSnapshot } from '../log/store-snapshot.js';
import type { LogRecord } from '../kernel/record.js';
import { HEAP_PROJECTIONS } from '../projections/all.js';
import { alertsProjection, type AlertsState } from '../projections/alerts.js';
import {
  createGraphProjection,
  DEFAULT_GRAPH_LIMITS,
  type GraphLimits,
  type GraphState,
} from '../projections/graph.js';
import { statsProjection, type Stats } from '../projections/stats.js';
import type { Projection } from '../projections/types.js';

/** The read models as of one seq, folded from a snapshot into fresh in-memory models. */
interface FoldedAsOf {
  readonly records: number;
  readonly heap: ReadonlyMap<string, unknown>;
  readonly graph: GraphState;
}

/**
 * Folds the write side's heap models and the graph from the snapshot's first record to `until`,
 * into fresh models: the records a retention cut carried forward first (as a replay from the cut
 * does), then the live ones, each decoded as that side's folds read it. The projections are the
 * instance's own; nothing of the live read models is read or written.
 */
function foldAsOf(snap: StoreSnapshot, until: number, limits: GraphLimits): FoldedAsOf {
  const heap = new Map<string, unknown>(HEAP_PROJECTIONS.map((p) => [p.name, p.initial()]));
  const graphProjection: Projection<GraphState> = createGraphProjection(limits);
  let graph = graphProjection.initial();
  const evolveHeap = (r: LogRecord) => {
    for (const p of HEAP_PROJECTIONS) heap.set(p.name, p.evolve(heap.get(p.name), r));
  };
  for (const r of snap.carried.all()) {
    evolveHeap(r);
    graph = graphProjection.evolve(graph, r);
  }
  let records = 0;
  for (const { bytes } of snap.log.readRaw(snap.log.first(), until)) {
    evolveHeap(decodeForWriteSide(bytes));
    graph = graphProjection.evolve(graph, decodeForReadSide(bytes));
    records++;
  }
  return { records, heap, graph };
}

/** The output folder, made 0700; an existing folder must be empty (a replay never mixes with other files). */
function outputFolder(dir: string): void {
  let existing: string[] | undefined;
  try {
    existing = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  if (existing !== undefined && existing.length > 0)
    throw new CliError(`replay --out: ${dir} is not empty; give a new or empty folder`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
}

/** Writes `value` as pretty-printed JSON (0600): the files are read by a person first. */
function writeJson(dir: string, name: string, value: unknown): void {
  writeFileSync(join(dir, name), `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
}

/** The files `vigil replay --out` writes, one a model, and the summary. */
export const REPLAY_FILES = ['summary.json', 'alerts.json', 'incidents.json', 'entities.json', 'relationships.json'];

/**
 * `vigil replay --until SEQ --out DIR`: the read models as of record SEQ (alerts, incidents, the
 * graph's entities and relationships) written as JSON files into DIR, with a summary, which is also
 * returned. It reads a read-only snapshot of the store, so it runs beside a serving instance, and
 * folds into fresh models in memory: the live read models are neither read nor touched.
 */
export async function replayOut(
  storePath: string,
  until: number | undefined,
  dir: string,
  graphLimits: GraphLimits = DEFAULT_GRAPH_LIMITS,
): Promise<Record<string, unknown>> {
  const snap = openStoreSnapshot(storePath);
  try {
    const head = snap.log.head().seq;
    const first = snap.log.first();
    const asOf = until ?? head;
    // After a cut the records before it are in the archives, not here: a state before it cannot be made.
    if (asOf > head || asOf < first - 1)
      throw new CliError(
        `replay --until ${asOf} is outside the live log (records ${first} to ${head}` +
          `${first > 1 ? `; those before ${first} were cut by retention and are in its archives` : ''})`,
      );
    outputFolder(dir);
    const started = performance.now();
    const folded = foldAsOf(snap, asOf, graphLimits);
    const alerts = folded.heap.get(alertsProjection.name) as AlertsState;
    const stats = folded.heap.get(statsProjection.name) as Stats;
    const summary = {
      until: asOf,
      head,
      from: first,
      records: folded.records,
      seconds: Number(((performance.now() - started) / 1000).toFixed(3)),
      alerts: alerts.alerts.size,
      incidents: alerts.incidents.size,
      entities: folded.graph.entities.size,
      relationships: folded.graph.relationships.size,
      // The graph is bounded like the live one (limits.graph*): past a limit the least recently seen go.
      graphForgotten: folded.graph.evicted,
      recordsByType: stats.records,
      eventsByCategory: stats.events,
      files: REPLAY_FILES,
    };
    writeJson(dir, 'alerts.json', [...alerts.alerts.values()]);
    writeJson(dir, 'incidents.json', [...alerts.incidents.values()]);
    writeJson(dir, 'entities.json', [...folded.graph.entities.values()]);
    writeJson(dir, 'relationships.json', [...folded.graph.relationships.values()]);
    writeJson(dir, 'summary.json', summary);
    return { out: dir, ...summary };
  } finally {
    await snap.close();
  }
}
