import * as v from 'valibot';
import { LEVEL_SEVERITY } from '../../../detection/meta.js';
import { LEVELS } from '../../../detection/types.js';
import { IsoDateTime } from '../../../events/normalized-event.js';
import { canonicalIso } from '../../query.js';
import { ALERT_STATUSES, type AlertsState, type AlertView } from '../../../projections/alerts.js';
import type { AlertFilter } from '../../../projections/alerts-query.js';
import { decodeCursor, encodeCursor } from '../../../projections/cursor.js';

/** The sort keys of the queue; `-key` sorts descending. */
export const QUEUE_SORTS = ['severity', 'lastSeen', 'firstSeen', 'status', 'title', 'assignee'] as const;
type SortKey = (typeof QUEUE_SORTS)[number];

const Blank = v.pipe(
  v.literal(''),
  v.transform(() => undefined),
);
const opt = <S extends v.GenericSchema<string, unknown>>(s: S) => v.optional(v.union([Blank, s]));

/**
 * The queue's URL query: the filters of `GET /api/v1/alerts` by name, the sort and the cursor (empty fields are no
 * filter).
 */
export const QueueQuery = v.object({
  status: opt(v.picklist(ALERT_STATUSES)),
  severity: opt(v.picklist(LEVELS)),
  rule: opt(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  entity: opt(v.pipe(v.string(), v.trim(), v.maxLength(512))),
  assignee: opt(v.pipe(v.string(), v.trim(), v.maxLength(128))),
  /** `true`: nobody has them yet; `false`: somebody has. */
  unassigned: opt(v.picklist(['true', 'false'])),
  since: opt(IsoDateTime),
  /** The log source of the alerts' rules (`sourceOfRule`): a facet of the queue. */
  source: opt(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  sort: opt(v.picklist([...QUEUE_SORTS, ...QUEUE_SORTS.map((s) => `-${s}` as const)])),
  cursor: opt(v.pipe(v.string(), v.maxLength(2048))),
  /** `flat`: one row per alert; otherwise one row per rule, expandable to its alerts. */
  view: opt(v.picklist(['grouped', 'flat'])),
});

/** The queue's parsed query. */
export type QueueParams = v.InferOutput<typeof QueueQuery>;

/**
 * The projection's filter of a queue query: a severity means "at least this level"; the rules are `rule` as resolved
 * (`resolveRule`: an id, or every rule of a title or name, narrowed to a source), or the text as a rule id when not
 * given.
 */
export function queueFilter(q: QueueParams, rule?: Pick<AlertFilter, 'ruleId' | 'ruleIds'>): AlertFilter {
  return {
    ...(q.status ? { status: q.status } : {}),
    ...(q.severity ? { minSeverity: LEVEL_SEVERITY[q.severity] } : {}),
    ...(rule ?? (q.rule ? { ruleId: q.rule } : {})),
    ...(q.entity ? { entity: q.entity } : {}),
    ...(q.assignee ? { assignee: q.assignee } : {}),
    ...(q.unassigned ? { unassigned: q.unassigned === 'true' } : {}),
    ...(q.since ? { since: canonicalIso(q.since) } : {}),
  };
}

const valueOf = (a: AlertView, key: SortKey): string | number =>
  key === 'severity' ? a.severity : key === 'assignee' ? (a.assignee ?? '') : a[key];

/** Orders alerts by a key, then by id so the order is total (a cursor names one place in it). */
function comparator(
  sort: string,
): (a: { value: string | number; id: string }, b: { value: string | number; id: string }) => number {
  const dir = sort.startsWith('-') ? -1 : 1;
  return (a, b) => (a.value < b.value ? -dir : a.value > b.value ? dir : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** One page of the queue: its alerts, how many match in all, and the cursor of the next page. */
export interface QueuePage {
  readonly alerts: AlertView[];
  readonly total: number;
  readonly nextCursor: string | undefined;
}

/**
 * Whether an alert matches a filter (an entity's alerts come from `queuePool`): the same test as `matchingAlerts`
 * (src/projections/alerts-query.ts), without its sort.
 */
export function matches(a: AlertView, f: AlertFilter): boolean {
  return (
    (f.status === undefined || a.status === f.status) &&
    (f.minSeverity === undefined || a.severity >= f.minSeverity) &&
    (f.ruleId === undefined || a.ruleId === f.ruleId) &&
    (f.ruleIds === undefined || f.ruleIds.includes(a.ruleId)) &&
    (f.since === undefined || a.lastSeen >= f.since) &&
    (f.assignee === undefined || a.assignee === f.assignee) &&
    (f.unassigned === undefined || (a.assignee === undefined) === f.unassigned)
  );
}

type Row = { a: AlertView; value: string | number; id: string };

/** The alerts a filter can only be among: one entity's, or all. */
export function queuePool(s: AlertsState, f: AlertFilter): Iterable<AlertView> {
  return f.entity !== undefined
    ? [...(s.bySystem.get(f.entity) ?? [])].map((id) => s.alerts.get(id)!)
    : s.alerts.values();
}

/**
 * A page of the alerts that match `q`, in the asked order (most recently seen first by default),
 * after the cursor: a keyset cursor (the sort, the last value and id), so paging stays stable while
 * alerts arrive. One pass over the alerts keeps only the `limit` first rows past the cursor (a
 * sorted buffer), so a page costs a scan, not a sort of every alert. Undefined when the cursor is
 * not one of this sort's.
 */
export function queuePage(
  s: AlertsState,
  q: QueueParams,
  limit: number,
  f: AlertFilter = queueFilter(q),
): QueuePage | undefined {
  const sort = q.sort ?? '-lastSeen';
  const key = sort.replace(/^-/, '') as SortKey;
  const cmp = comparator(sort);
  let pivot: { value: string | number; id: string } | undefined;
  if (q.cursor !== undefined) {
    const c = decodeCursor<[string, string | number, string]>(q.cursor);
    if (
      !Array.isArray(c) ||
      c[0] !== sort ||
      typeof c[2] !== 'string' ||
      (typeof c[1] !== 'string' && typeof c[1] !== 'number')
    )
      return undefined;
    pivot = { value: c[1], id: c[2] };
  }
  const keep = limit + 1;
  const buffer: Row[] = [];
  let total = 0;
  for (const a of queuePool(s, f)) {
    if (!matches(a, f)) continue;
    total++;
    const row = { a, value: valueOf(a, key), id: a.id };
    if (pivot && cmp(row, pivot) <= 0) continue;
    if (buffer.length === keep && cmp(row, buffer[keep - 1]!) >= 0) continue;
    let lo = 0;
    let hi = buffer.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(buffer[mid]!, row) < 0) lo = mid + 1;
      else hi = mid;
    }
    buffer.splice(lo, 0, row);
    if (buffer.length > keep) buffer.pop();
  }
  const page = buffer.slice(0, limit);
  const last = page.at(-1);
  return {
    alerts: page.map((r) => r.a),
    total,
    nextCursor: last && buffer.length > limit ? encodeCursor([sort, last.value, last.id]) : undefined,
  };
}
