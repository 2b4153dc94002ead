/**
 * The worker thread of rules whose cost has no bound (isolated-rules.ts): compiles the rule
 * documents it was started with, then evaluates each batch it is sent rule by rule, saying in
 * shared memory which rule runs on which event since when, so the request thread can stop it past
 * its budget.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { compileSigma } from '../../detection/compile.js';
import { createMeter, createRuleSet, type RuleSet } from '../../detection/engine.js';
import type { MatchDetail } from '../../detection/types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';

/** What the worker is started with: the rule documents, its answer port and the shared progress. */
export interface IsolatedWorkerData {
  readonly docs: unknown[];
  readonly port: MessagePort;
  readonly shared: SharedArrayBuffer;
}

/** One rule's part of an answer: its matches (event index and why) and what evaluating it cost. */
export interface IsolatedRuleResult {
  readonly matches: Array<{ readonly event: number; readonly detail: MatchDetail }>;
  readonly evaluations: number;
  readonly ms: number;
  readonly slowestEvent?: string;
  /** Set when evaluating the rule threw: it is stopped like one past its budget. */
  readonly error?: string;
}

/** What the worker answers: once `ready` (or `error`), then `results` per batch, one per rule in start order. */
export type FromIsolatedWorker =
  { kind: 'ready' } | { kind: 'error'; message: string } | { kind: 'results'; results: IsolatedRuleResult[] };

/**
 * The shared memory: an Int32 done flag (1 once an answer is posted), then three Float64 slots:
 * the running rule's index, the event's index and when that rule started on the batch (`sharedNow`).
 */
export const SHARED_BYTES = 32;

/** Now, on a clock every thread of the process shares (epoch milliseconds, fractional). */
export const sharedNow = (): number => performance.timeOrigin + performance.now();

/** One rule over a batch, event by event, each event's index said in `progress` before it is tried. */
function evaluateRule(
  set: RuleSet | undefined,
  events: readonly NormalizedEvent[],
  progress: Float64Array,
): IsolatedRuleResult {
  if (!set) return { matches: [], evaluations: 0, ms: 0, error: 'the rule did not compile in the worker' };
  const meter = createMeter(1);
  const matches: Array<{ event: number; detail: MatchDetail }> = [];
  try {
    events.forEach((event, i) => {
      progress[1] = i;
      for (const m of set.matchEvents([event], meter).matches)
        matches.push({ event: i, detail: m.detail as MatchDetail });
    });
  } catch (err) {
    return { matches: [], evaluations: meter.evaluations[0]!, ms: meter.ms[0]!, error: (err as Error).message };
  }
  return {
    matches,
    evaluations: meter.evaluations[0]!,
    ms: meter.ms[0]!,
    ...(meter.slowestEvent[0] !== undefined ? { slowestEvent: meter.slowestEvent[0] } : {}),
  };
}

const data = workerData as IsolatedWorkerData | null;
if (data?.port) {
  const { port, shared, docs } = data;
  const flag = new Int32Array(shared, 0, 1);
  const progress = new Float64Array(shared, 8, 3);
  const answer = (m: FromIsolatedWorker) => {
    port.postMessage(m);
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
  };
  // One set per rule: each is timed on its own, and one stopped leaves the others' answers whole.
  const sets = docs.map((doc) => {
    const compiled = compileSigma(doc);
    return compiled.ok && compiled.rule.kind === 'detection' ? createRuleSet([compiled.rule]) : undefined;
  });
  port.on('message', (events: NormalizedEvent[]) => {
    const results = sets.map((set, i) => {
      progress[0] = i;
      progress[2] = sharedNow();
      return evaluateRule(set, events, progress);
    });
    progress[2] = 0;
    answer({ kind: 'results', results });
  });
  answer({ kind: 'ready' });
}
