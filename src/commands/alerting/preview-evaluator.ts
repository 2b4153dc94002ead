/**
 * Where a rule preview evaluates its rules. A preview runs rules a viewer wrote over stored events,
 * and one regular expression with lookarounds or back-references (which V8's linear-time engine
 * cannot run) can backtrack for minutes on one value: in the request thread that would hold every
 * client of the service. So previews evaluate in a worker thread of their own, and a chunk that has
 * not been evaluated by the preview's deadline ends the worker (V8 interrupts a running match).
 */
import { Worker } from 'node:worker_threads';
import { initialCorrelationState } from '../../detection/correlate.js';
import { createRuleSet, type RuleMatch } from '../../detection/engine.js';
import type { CompiledSigma } from '../../detection/types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { FromPreviewWorker, PreviewWorkerData } from './preview-worker.js';

/** Evaluates a preview's rules over its events, chunk after chunk, in time order (correlation windows carry over). */
export interface PreviewEvaluator {
  /**
   * The matches of the next chunk, or undefined when they were not found by `deadlineMs` (`performance.now()` time);
   * the evaluator is then stopped.
   */
  evaluate(events: readonly NormalizedEvent[], deadlineMs: number): Promise<RuleMatch[] | undefined>;
  /** Stops the evaluator (idempotent). */
  close(): Promise<void>;
}

/** Matches chunks of events in order, carrying the correlation windows over (what the worker runs). */
export function chunkMatcher(rules: readonly CompiledSigma[]): (events: readonly NormalizedEvent[]) => RuleMatch[] {
  const set = createRuleSet([...rules]);
  let state = initialCorrelationState();
  return (events) => {
    const next = set.evaluate(state, [...events]);
    state = next.state;
    return next.matches;
  };
}

/**
 * In a worker thread of its own, which compiles the rules from their documents (as a restart does:
 * compiled rules hold functions and cannot be sent). Resolves once the worker has compiled them.
 */
export async function workerEvaluator(docs: readonly unknown[]): Promise<PreviewEvaluator> {
  const data: PreviewWorkerData = { docs: [...docs] };
  const worker = new Worker(new URL('./preview-worker.js', import.meta.url), { workerData: data });
  let pending: ((m: FromPreviewWorker | undefined) => void) | undefined;
  let ended: string | undefined;
  const answer = (m: FromPreviewWorker | undefined) => {
    const p = pending;
    pending = undefined;
    p?.(m);
  };
  worker.on('message', (m: FromPreviewWorker) => answer(m));
  worker.on('error', (err) => {
    ended = err.message;
    answer({ kind: 'error', message: err.message });
  });
  worker.on('exit', () => {
    ended ??= 'the preview worker stopped';
    answer(undefined);
  });
  const next = () =>
    new Promise<FromPreviewWorker | undefined>((resolve) => {
      pending = resolve;
    });
  const close = async () => {
    ended ??= 'closed';
    await worker.terminate();
  };
  const ready = await next();
  if (ready?.kind !== 'ready') {
    await close();
    throw new Error(`the preview worker did not start: ${ready?.kind === 'error' ? ready.message : ended}`);
  }
  return {
    async evaluate(events, deadlineMs) {
      if (ended !== undefined) throw new Error(`the preview worker has ended: ${ended}`);
      const reply = next();
      worker.postMessage(events);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), Math.max(0, deadlineMs - performance.now()));
      });
      const m = await Promise.race([reply, late]);
      clearTimeout(timer);
      if (m === 'late') {
        await close();
        return undefined;
      }
      if (m?.kind === 'matches') return m.matches;
      throw new Error(`the preview worker failed: ${m?.kind === 'error' ? m.message : ended}`);
    },
    close,
  };
}
