import { workerEvaluator } from '../commands/alerting/preview-evaluator.js';
import { previewRules, type PreviewBounds, type PreviewResult } from '../commands/alerting/rule-preview.js';
import type { RuleMatch } from '../detection/engine.js';
import type { CompiledSigma } from '../detection/types.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import { eventsInTimeOrder } from '../projections/evidence-query.js';
import type { AppDeps } from './env.js';
import { HttpError } from './errors.js';

/** Previews running per app (`limits.previewsAtOnce`): each holds a worker thread and up to a core. */
const previewsRunning = new WeakMap<AppDeps, { n: number }>();

/**
 * Runs `set` (compiled here, evaluated from `docOf` in a worker thread: src/commands/alerting/preview-evaluator.ts) over
 * the stored events of `[sinceMs, untilMs]`, keeping the matches of `ids` that `select` accepts. At most
 * `limits.previewsAtOnce` run at once (a 429 past that), each bounded by `limits.previewSeconds`. Raises nothing.
 */
export async function runPreview(
  deps: AppDeps,
  set: readonly CompiledSigma[],
  docOf: (rule: CompiledSigma) => unknown,
  ids: readonly string[],
  range: { since: string; until: string; sinceMs: number; untilMs: number },
  bounds: Omit<PreviewBounds, 'maxMs'>,
  select?: (match: RuleMatch, chunk: ReadonlyMap<string, NormalizedEvent>) => boolean,
): Promise<PreviewResult> {
  const { previewSeconds, previewsAtOnce } = deps.config.limits;
  const running = previewsRunning.get(deps) ?? { n: 0 };
  previewsRunning.set(deps, running);
  if (running.n >= previewsAtOnce)
    throw new HttpError(
      429,
      `${previewsAtOnce} rule previews are running; try again when one has finished`,
      undefined,
      { retryAfterSeconds: previewSeconds },
    );
  running.n += 1;
  try {
    const evaluator = await workerEvaluator(set.map(docOf));
    try {
      return await previewRules(
        evaluator,
        ids,
        (after, max) => eventsInTimeOrder(deps.reads, range.sinceMs, range.untilMs, max, after),
        { since: range.since, until: range.until },
        { ...bounds, maxMs: previewSeconds * 1000 },
        select,
      );
    } finally {
      await evaluator.close();
    }
  } finally {
    running.n -= 1;
  }
}
