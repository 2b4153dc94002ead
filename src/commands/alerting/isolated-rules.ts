/**
 * Rules whose cost on one value has no bound (a regular expression with a lookaround or a
 * back-reference, which V8's linear-time engine cannot run) are evaluated in a worker thread, not on
 * the request thread. The detector is synchronous (it runs inside the write pipeline's decision),
 * so it waits for the worker with `Atomics.wait`, in short slices, watching which rule the worker
 * is running and since when: a rule past its budget ends the worker (V8 interrupts a running
 * match), is reported as an overrun, and the batch is evaluated again without it. The request
 * thread is held at most a budget per overrunning rule, once: the overrun quarantines the rule.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { IsolatedMatch } from '../../detection/engine.js';
import { indexKeysForEvent } from '../../detection/logsources.js';
import type { CompiledRule } from '../../detection/types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import {
  SHARED_BYTES,
  sharedNow,
  type FromIsolatedWorker,
  type IsolatedRuleResult,
  type IsolatedWorkerData,
} from './isolated-worker.js';
import { budgetMs, eventsText, type RuleBudget, type RuleOverrun } from './rule-budget.js';

/** What evaluating a batch's isolated rules found, cost and stopped. */
export interface IsolatedOutcome {
  readonly found: IsolatedMatch[];
  readonly costs: ReadonlyArray<{ ruleId: string; evaluations: number; matches: number; ms: number }>;
  readonly overruns: RuleOverrun[];
}

/** The isolated rules of one rule set, with the worker that runs them. */
export interface IsolatedRules {
  run(events: readonly NormalizedEvent[], budget: RuleBudget): IsolatedOutcome;
  close(): void;
}

/** One isolated rule: compiled (for its keys and id) and its document (for the worker to compile). */
export interface IsolatedRule {
  readonly rule: CompiledRule;
  readonly doc: unknown;
}

/** How long a worker may take to start and compile its rules. */
const START_MS = 10_000;
/** How often the wait looks at the worker's progress. */
const SLICE_MS = 5;

interface Running {
  readonly worker: Worker;
  readonly port: MessagePort;
  readonly flag: Int32Array;
  readonly progress: Float64Array;
}

function start(rules: readonly IsolatedRule[]): Running | undefined {
  const shared = new SharedArrayBuffer(SHARED_BYTES);
  const { port1, port2 } = new MessageChannel();
  const data: IsolatedWorkerData = { docs: rules.map((r) => r.doc), port: port2, shared };
  const worker = new Worker(new URL('./isolated-worker.js', import.meta.url), {
    workerData: data,
    transferList: [port2],
  });
  // The worker never keeps the process alive; it is ended with its rule set.
  worker.unref();
  worker.on('error', () => {});
  const flag = new Int32Array(shared, 0, 1);
  Atomics.wait(flag, 0, 0, START_MS);
  const ready = receiveMessageOnPort(port1)?.message as FromIsolatedWorker | undefined;
  if (ready?.kind !== 'ready') {
    void worker.terminate();
    port1.close();
    return undefined;
  }
  return { worker, port: port1, flag, progress: new Float64Array(shared, 8, 3) };
}

function stop(running: Running): void {
  void running.worker.terminate();
  running.port.close();
}

/** Waits for the worker's answer; the index of the rule that ran past `limitMs` when it did not come in time. */
function awaitAnswer(running: Running, limitMs: number): { results: IsolatedRuleResult[] } | { overrun: number } {
  const { flag, progress } = running;
  for (;;) {
    Atomics.wait(flag, 0, 0, SLICE_MS);
    if (Atomics.load(flag, 0) === 1) {
      const m = receiveMessageOnPort(running.port)?.message as FromIsolatedWorker | undefined;
      if (m?.kind === 'results') return { results: m.results };
      return { overrun: -1 };
    }
    const startedAt = progress[2]!;
    if (startedAt > 0 && sharedNow() - startedAt > limitMs) return { overrun: progress[0]! };
  }
}

/** Runs `rules` in a worker thread of their own; `close` ends it. */
export function isolatedRules(rules: readonly IsolatedRule[]): IsolatedRules {
  const keys = new Set(rules.flatMap((r) => r.rule.indexKeys));
  let running: Running | undefined;
  let active = rules;
  return {
    run(events, budget) {
      const relevant = events.filter((e) => indexKeysForEvent(e).some((k) => keys.has(k)));
      const overruns: RuleOverrun[] = [];
      if (relevant.length === 0 || active.length === 0) return { found: [], costs: [], overruns };
      const limitMs = budgetMs(budget, relevant.length);
      for (;;) {
        running ??= start(active);
        if (!running) {
          const reason = 'the worker thread that runs rules with lookarounds or back-references did not start';
          overruns.push(
            ...active.map((r) => ({ ruleId: r.rule.id, reason, budgetMs: 0, measuredMs: 0, evaluations: 0 })),
          );
          active = [];
          return { found: [], costs: [], overruns };
        }
        const startedAt = sharedNow();
        Atomics.store(running.flag, 0, 0);
        running.progress[2] = 0;
        running.port.postMessage(relevant);
        const answer = awaitAnswer(running, limitMs);
        if ('results' in answer) {
          const done = collect(active, relevant, answer.results, budget);
          return { ...done, overruns: [...overruns, ...done.overruns] };
        }
        const index = answer.overrun;
        const eventIndex = running.progress[1]!;
        stop(running);
        running = undefined;
        // An answer that never came whole (the worker failed): every rule is suspect, and none is kept running blind.
        const over = index >= 0 ? [active[index]!] : active;
        for (const r of over)
          overruns.push({
            ruleId: r.rule.id,
            reason:
              `still running after ${Math.round(sharedNow() - startedAt)} ms on a batch of ` +
              `${eventsText(relevant.length)} (budget ${Math.round(limitMs)} ms): stopped`,
            budgetMs: limitMs,
            measuredMs: sharedNow() - startedAt,
            evaluations: eventIndex + 1,
            sampleEventId: relevant[eventIndex]?.id ?? relevant[0]!.id,
          });
        active = active.filter((r) => !over.includes(r));
        if (active.length === 0) return { found: [], costs: [], overruns };
      }
    },
    close() {
      if (running) stop(running);
      running = undefined;
    },
  };
}

/** The worker's answer as matches and costs; a rule whose evaluation threw is an overrun. */
function collect(
  rules: readonly IsolatedRule[],
  events: readonly NormalizedEvent[],
  results: readonly IsolatedRuleResult[],
  budget: RuleBudget,
): IsolatedOutcome {
  const found: IsolatedMatch[] = [];
  const costs: Array<{ ruleId: string; evaluations: number; matches: number; ms: number }> = [];
  const overruns: RuleOverrun[] = [];
  results.forEach((r, i) => {
    const ruleId = rules[i]!.rule.id;
    costs.push({ ruleId, evaluations: r.evaluations, matches: r.matches.length, ms: r.ms });
    if (r.error !== undefined) {
      overruns.push({
        ruleId,
        reason: `evaluating it failed: ${r.error.slice(0, 200)}`,
        budgetMs: budgetMs(budget, r.evaluations),
        measuredMs: r.ms,
        evaluations: r.evaluations,
        ...(r.slowestEvent !== undefined ? { sampleEventId: r.slowestEvent } : {}),
      });
      return;
    }
    for (const m of r.matches) found.push({ ruleId, event: events[m.event]!, detail: m.detail });
  });
  return { found, costs, overruns };
}
