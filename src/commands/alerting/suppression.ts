import { createHash } from 'node:crypto';
import type { CorrelationFire } from '../../detection/correlate.js';
import type { RuleMatch } from '../../detection/engine.js';
import { eventFieldValue } from '../../detection/logsources.js';
import type { Suppression } from '../../detection/types.js';
import type { AlertRaised } from '../../events/detection-records.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { canonicalJson } from '../../kernel/canonical-json.js';

/** A suppression as an alert records it: the rule's, with the values it groups and the end of its window. */
export type AlertSuppression = NonNullable<AlertRaised['suppression']>;

/** Longest group key spelled out; a longer one (long values) is its hash. */
const KEY_CHARS = 512;
/** Longest text of one value an alert records (the group key is made of the whole value). */
const VALUE_CHARS = 256;

/** The values of a suppressed match and the group key made of them. */
export interface SuppressedGroup {
  readonly groupKey: string;
  readonly values: Record<string, unknown>;
}

/**
 * The values of the `by` fields of a match: a detection's from its first event, a correlation's from
 * its group (import and the API refuse a field outside its group-by). A field without a value is `null`.
 */
export function suppressedGroup(s: Suppression, m: RuleMatch, first: NormalizedEvent | undefined): SuppressedGroup {
  const group = m.kind === 'correlation' ? (m.detail as CorrelationFire).groupValues : undefined;
  const values: Record<string, unknown> = {};
  for (const field of s.by) {
    const value = group ? group[field] : first ? eventFieldValue(first, field) : undefined;
    values[field] = value ?? null;
  }
  // Canonical JSON starts with `{`: it never equals a system's group key (`host:…`) or a correlation's.
  const text = canonicalJson(values);
  const groupKey =
    text.length <= KEY_CHARS ? text : `sha256:${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
  return { groupKey, values: boundedValues(values) };
}

function boundedValues(values: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(values)) {
    const text = typeof value === 'string' ? value : value === null ? '' : canonicalJson(value);
    out[field] = text.length <= VALUE_CHARS ? value : `${text.slice(0, VALUE_CHARS)}…`;
  }
  return out;
}

/** The suppression a new alert records: its window runs for `forMs` from the time of the match raising it. */
export function alertSuppression(s: Suppression, group: SuppressedGroup, fromMs: number): AlertSuppression {
  return {
    by: [...s.by],
    for: s.for,
    forMs: s.forMs,
    values: group.values,
    until: new Date(Math.min(fromMs + s.forMs, 8.64e15)).toISOString(),
  };
}

/** Whether a match at `matchMs` falls in an alert's suppression window (an alert without one takes every match). */
export function withinWindow(alert: { readonly suppression?: AlertSuppression | undefined }, matchMs: number): boolean {
  if (!alert.suppression) return true;
  return matchMs < Date.parse(alert.suppression.until);
}
