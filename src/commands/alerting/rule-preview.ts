import type { RuleMatch } from '../../detection/engine.js';
import type { CompiledSigma } from '../../detection/types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { EventCursor } from '../../projections/evidence-query.js';
import type { PreviewEvaluator } from './preview-evaluator.js';

/** How far one preview may go: events read, matches returned, wall-clock time. */
export interface PreviewBounds {
  readonly maxEvents: number;
  readonly maxMatches: number;
  readonly maxMs: number;
}

/** One match a previewed rule would have raised an alert for. */
export interface PreviewMatch {
  readonly ruleId: string;
  readonly kind: 'detection' | 'correlation';
  readonly time: string;
  readonly eventIds: string[];
  readonly groupKey: string;
  /** Why it matched: the selections and fields (a detection) or the count over the window (a correlation). */
  readonly detail: RuleMatch['detail'];
  /** The matched event (detections only). */
  readonly event?: NormalizedEvent;
}

/** What a preview found; nothing of it is recorded as a hit or an alert. */
export interface PreviewResult {
  readonly ruleIds: string[];
  readonly since: string;
  readonly until: string;
  readonly scanned: number;
  /** Every match found in what was scanned; `matches` holds the first `maxMatches` of them. */
  readonly matchCount: number;
  readonly matches: PreviewMatch[];
  /**
   * Whether the whole range was scanned; otherwise `stoppedBy` says which bound ended it and `resumeAfter` where it
   * stopped.
   */
  readonly complete: boolean;
  readonly stoppedBy?: 'events' | 'time';
  readonly resumeAfter?: string;
}

/** Reads the next chunk of stored events, oldest first, after a cursor. */
export type ChunkReader = (
  after: EventCursor | undefined,
  max: number,
) => { events: NormalizedEvent[]; last?: EventCursor };

const CHUNK = 500;

/**
 * The rules a preview evaluates: the previewed ones, plus the installed rules their correlations
 * reference (transitively), so a correlation over installed detections can be tried too.
 */
export function previewRuleSet(
  previewed: readonly CompiledSigma[],
  installed: ReadonlyMap<string, CompiledSigma>,
): CompiledSigma[] {
  const set = new Map(previewed.map((r) => [r.id, r]));
  const byName = new Map([...installed.values()].filter((r) => r.name !== undefined).map((r) => [r.name!, r]));
  const pending = [...previewed];
  while (pending.length > 0) {
    const r = pending.pop()!;
    if (r.kind !== 'correlation') continue;
    for (const ref of r.rules) {
      const found = installed.get(ref) ?? byName.get(ref);
      if (found && !set.has(found.id) && ![...set.values()].some((s) => s.name === ref)) {
        set.set(found.id, found);
        pending.push(found);
      }
    }
  }
  return [...set.values()];
}

/**
 * Runs rules over stored events in time order, as detection would have run them live, and returns
 * what the previewed rules would have matched. It reads chunks and has `evaluator` match them
 * (awaiting it lets the writer go on between chunks), and stops at the first bound reached. The time bound holds even
 * within a chunk: one the evaluator has not finished by then is left unscanned, and the preview resumes
 * before it. `select`, when given, keeps only the matches it accepts (an exception's preview counts those it covers),
 * with the chunk's events by id.
 */
export async function previewRules(
  evaluator: PreviewEvaluator,
  previewIds: readonly string[],
  read: ChunkReader,
  range: { since: string; until: string },
  bounds: PreviewBounds,
  select?: (match: RuleMatch, chunk: ReadonlyMap<string, NormalizedEvent>) => boolean,
): Promise<PreviewResult> {
  const wanted = new Set(previewIds);
  const started = performance.now();
  let after: EventCursor | undefined;
  let scanned = 0;
  let matchCount = 0;
  const matches: PreviewMatch[] = [];
  const base = () => ({ ruleIds: [...previewIds], ...range, scanned, matchCount, matches });
  for (;;) {
    const chunk = read(after, Math.min(CHUNK, bounds.maxEvents - scanned));
    const found = await evaluator.evaluate(chunk.events, started + bounds.maxMs);
    if (found === undefined)
      return {
        ...base(),
        complete: false,
        stoppedBy: 'time',
        resumeAfter: after ? new Date(after[0]).toISOString() : range.since,
      };
    const byId = new Map(chunk.events.map((e) => [e.id, e]));
    scanned += chunk.events.length;
    for (const m of found) {
      if (!wanted.has(m.ruleId) || (select !== undefined && !select(m, byId))) continue;
      matchCount += 1;
      if (matches.length >= bounds.maxMatches) continue;
      const event = m.kind === 'detection' ? byId.get(m.eventIds[0]!) : undefined;
      matches.push({
        ruleId: m.ruleId,
        kind: m.kind,
        time: new Date(m.timeMs).toISOString(),
        eventIds: m.eventIds.slice(0, 100),
        groupKey: m.groupKey,
        detail: m.detail,
        ...(event ? { event } : {}),
      });
    }
    after = chunk.last;
    if (after === undefined) return { ...base(), complete: true };
    const stoppedBy =
      scanned >= bounds.maxEvents ? 'events' : performance.now() - started >= bounds.maxMs ? 'time' : undefined;
    if (stoppedBy) return { ...base(), complete: false, stoppedBy, resumeAfter: new Date(after[0]).toISOString() };
  }
}
