/**
 * The read-side worker thread: tails the log (the writer's environment, read only here) and folds
 * the read models that no decision needs (events by time and dimension, the audit trail, the
 * graph) into its own LMDB environment and heap, off the request thread. It answers graph queries
 * and reports how far it has folded, so reads can wait for their own writes.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openStoreInWorker } from '../../log/worker-job.js';
import type { LogRecord } from '../../kernel/record.js';
import { decodeLentForReadSide } from '../../log/evidence-fields.js';
import { queryGraph } from '../graph-query.js';
import type { GraphState } from '../graph.js';
import { readProjections } from '../all.js';
import { openReadFold } from './read-fold.js';
import { lowerThreadPriority } from './thread-priority.js';
import { openCarriedIndex } from '../../log/retention/carried.js';
import type { LogCut } from '../../log/event-log.js';
import type { FromReadWorker, ReadWorkerData, ToReadWorker } from './protocol.js';

const data = workerData as ReadWorkerData;
const port = parentPort!;
const post = (m: FromReadWorker) => port.postMessage(m);

// Relative to the writer's priority, which this thread inherited: it only ever runs below it.
lowerThreadPriority(data.nice ?? 0);

const { root, meta: logMeta, openLentReader } = openStoreInWorker(data.storePath);
// Each record is decoded where lmdb-js reads it, without a copy (src/log/lent-range.ts).
const records = openLentReader(decodeLentForReadSide);
const log = {
  *read(from: number, to: number): Iterable<LogRecord> {
    for (const { value } of records.range(from, to)) yield value;
  },
  head: () => logMeta.get('head') ?? { seq: 0 },
  first: () => (logMeta.get('cut') as LogCut | undefined)?.firstSeq ?? 1,
  carried: () => carried.all(),
  renew: () => root.resetReadTxn(),
};
const carried = openCarriedIndex(root, (seq) => {
  for (const r of log.read(seq, seq)) return r;
  return undefined;
});

// Ready before the (possibly long) restore of the graph, so the writer's thread does not wait for
// it: reads wait for the read side through the applied seq instead.
post({ kind: 'ready', applied: 0 });
const haltFlag = new Int32Array(data.halt);
const halted = () => Atomics.load(haltFlag, 0) !== 0;
const fold = openReadFold(data.storePath, log, readProjections(data.graph), {
  ...(data.checkpointEvery ? { checkpointEvery: data.checkpointEvery } : {}),
  halted,
});
post({ kind: 'applied', seq: fold.applied() });
let target = log.head().seq;
/** The longest a turn of the worker forgets what a cut removed before it looks for new records and queries. */
const EXPIRY_SLICE_MS = 50;
let scheduled = false;
let closing = false;

/**
 * Folds one chunk per turn, so graph queries and new heads are answered between chunks. The read
 * snapshot is renewed first: lmdb-js renews it only on a later timer, which could still predate
 * the commit the writer just announced.
 */
function step(): void {
  scheduled = false;
  if (closing || halted()) return;
  try {
    root.resetReadTxn();
    const before = fold.applied();
    if (before < target) fold.catchUp(Math.min(target, before + 20_000));
    if (fold.applied() !== before) post({ kind: 'applied', seq: fold.applied() });
    if (halted()) return;
    // What a retention cut removed is forgotten a slice per turn, between folds and graph queries.
    const expired = !fold.expiring() || fold.expireStep(EXPIRY_SLICE_MS);
    if (fold.applied() < target) {
      if (fold.applied() !== before) schedule();
      else setTimeout(schedule, 5); // announced but not visible yet: look again shortly
    } else if (!expired) schedule();
  } catch (err) {
    post({ kind: 'failed', message: `read side fold failed: ${(err as Error).message}` });
  }
}

function schedule(): void {
  if (!scheduled) {
    scheduled = true;
    setImmediate(step);
  }
}

port.on('message', (m: ToReadWorker) => {
  try {
    switch (m.kind) {
      case 'head':
        if (m.seq > target) target = m.seq;
        schedule();
        return;
      case 'graph':
        step();
        post({ kind: 'reply', id: m.id, value: queryGraph(fold.state<GraphState>('graph'), m.query) ?? null });
        return;
      case 'snapshot': {
        const p = readProjections(data.graph).heap.find((x) => x.name === m.name);
        const s = fold.state(m.name);
        post({ kind: 'reply', id: m.id, value: p?.snapshot ? p.snapshot(s) : s });
        return;
      }
      case 'settle':
        fold.expireStep(Infinity);
        post({ kind: 'reply', id: m.id, value: null });
        return;
      case 'rebuild': {
        const n = fold.rebuild(m.until);
        target = Math.max(target, fold.applied());
        post({ kind: 'reply', id: m.id, value: n });
        post({ kind: 'applied', seq: fold.applied() });
        schedule();
        return;
      }
      case 'halt':
        // Taken between two turns, with the halt flag up: no fold begins another transaction, so
        // the process may end this thread at any time.
        post({ kind: 'reply', id: m.id, value: null });
        return;
      case 'close':
        closing = true;
        void fold
          .close()
          .then(() => root.close())
          .then(() => post({ kind: 'reply', id: m.id, value: null }));
        return;
    }
  } catch (err) {
    post({ kind: 'failed', ...('id' in m ? { id: m.id } : {}), message: (err as Error).message });
  }
});

schedule();
