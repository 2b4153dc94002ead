import type { CompiledSigma } from '../../detection/types.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import type { AlertView, AlertsState } from '../../projections/alerts.js';
import {
  exceptionHolds,
  scopeCovers,
  type ExceptionsState,
  type ExceptionTerms,
  type ExceptionView,
} from '../../projections/exceptions.js';

/** A draft's terms as an exception the matchers can read (nothing of it is recorded). */
export function draftException(terms: ExceptionTerms): { state: ExceptionsState; view: ExceptionView } {
  const view: ExceptionView = {
    id: 'draft',
    ...terms,
    createdAt: '',
    createdBy: '',
    matchesExcepted: 0,
    byRule: {},
    history: [],
  };
  return { state: { exceptions: new Map([[view.id, view]]), exceptedByRule: new Map(), tests: new Map() }, view };
}

/** What a draft exception would have done to the stored alerts. */
export interface AlertsPreview {
  /** Alerts of rules the draft covers, seen since the preview's start. */
  readonly inScope: number;
  /** Those every stored evidence event of which the draft's condition holds on: they would not have been raised. */
  readonly removed: readonly AlertView[];
}

/**
 * The stored alerts a draft exception would have kept from being raised: those of a covered rule, last seen at or
 * after `sinceMs`, with evidence, every event of which is stored and held by the condition. Built-in alerts (no rule)
 * are never covered. Pure but for reading stored events through `find`.
 */
export function alertsExcepted(
  alerts: AlertsState,
  rules: ReadonlyMap<string, { readonly compiled: CompiledSigma }>,
  terms: ExceptionTerms,
  find: (id: string) => NormalizedEvent | undefined,
  sinceMs: number,
  untilMs: number,
): AlertsPreview {
  const { state, view } = draftException(terms);
  let inScope = 0;
  const removed: AlertView[] = [];
  for (const alert of alerts.alerts.values()) {
    const rule = rules.get(alert.ruleId)?.compiled;
    if (!rule || !scopeCovers(terms.scope, rule)) continue;
    const last = Date.parse(alert.lastSeen);
    if (last < sinceMs || Date.parse(alert.firstSeen) > untilMs) continue;
    inScope += 1;
    const events = alert.evidence.map((ref) => find(ref.eventId));
    if (events.length === 0 || events.some((e) => e === undefined)) continue;
    if (exceptionHolds(state, view, rule, events as NormalizedEvent[])) removed.push(alert);
  }
  return { inScope, removed };
}
