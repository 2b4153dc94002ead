import * as v from 'valibot';
import { LEVEL_SEVERITY } from '../../detection/meta.js';
import { LEVELS } from '../../detection/types.js';
import { IsoDateTime } from '../../events/normalized-event.js';
import { canonicalIso } from '../../http/query.js';
import { ALERT_STATUSES, type AlertsState, type AlertView } from '../../projections/alerts.js';
import { matchingAlerts, type AlertFilter } from '../../projections/alerts-query.js';
import { decodeCursor, encodeCursor } from '../../projections/cursor.js';

/** The sort keys of the queue; `-key` sorts descending. */
export const QUEUE_SORTS = ['severity', 'lastSeen', 'firstSeen', 'status', 'title', 'assignee'] as const;
type SortKey = (typeof QUEUE_SORTS)[number];

const Blank = v.pipe(v.literal(''), v.transform(() => undefined));
const opt = <S extends v.GenericSchema<string, unknown>>(s: S) => v.optional(v.union([Blank, s]));

/** The queue's URL query: the filters of `GET /api/v1/alerts` by name, the sort and the cursor (empty fields are no filter). */
export const QueueQuery = v.object({
  status: opt(v.picklist(ALERT_STATUSES)),
  severity: opt(v.picklist(LEVELS)),
  rule: opt(v.pipe(v.string(), v.trim(), v.maxLength(256))),
  entity: opt(v.pipe(v.string(), v.trim(), v.maxLength(512))),
  assignee: opt(v.pipe(v.string(), v.trim(), v.maxLength(128))),
  since: opt(IsoDateTime),
  sort: opt(v.picklist([...QUEUE_SORTS, ...QUEUE_SORTS.map((s) => `-${s}` as const)])),
  cursor: opt(v.pipe(v.string(), v.maxLength(2048))),
});

/** The queue's parsed query. */
export type QueueParams = v.InferOutput<typeof QueueQuery>;

/** The projection's filter of a queue query: a severity means "at least this level". */
export function queueFilter(q: QueueParams): AlertFilter {
  return {
    ...(q.status ? { status: q.status } : {}), ...(q.severity ? { minSeverity: LEVEL_SEVERITY[q.severity] } : {}),
    ...(q.rule ? { ruleId: q.rule } : {}), ...(q.entity ? { entity: q.entity } : {}),
    ...(q.assignee ? { assignee: q.assignee } : {}), ...(q.since ? { since: canonicalIso(q.since) } : {}),
  };
}

const valueOf = (a: AlertView, key: SortKey): string | number => (key === 'severity' ? a.severity : key === 'assignee' ? (a.assignee ?? '') : a[key]);

/** Orders alerts by a key, then by id so the order is total (a cursor names one place in it). */
function comparator(sort: string): (a: { value: string | number; id: string }, b: { value: string | number; id: string }) => number {
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
 * A page of the alerts that match `q`, in the asked order (most recently seen first by default),
 * after the cursor: a keyset cursor (the sort, the last value and id), so paging stays stable while
 * alerts arrive. Undefined when the cursor is not one of this sort's.
 */
export function queuePage(s: AlertsState, q: QueueParams, limit: number): QueuePage | undefined {
  const sort = q.sort ?? '-lastSeen';
  const key = sort.replace(/^-/, '') as SortKey;
  const cmp = comparator(sort);
  const rows = matchingAlerts(s, queueFilter(q)).map((a) => ({ a, value: valueOf(a, key), id: a.id })).sort(cmp);
  let start = 0;
  if (q.cursor !== undefined) {
    const c = decodeCursor<[string, string | number, string]>(q.cursor);
    if (!Array.isArray(c) || c[0] !== sort || typeof c[2] !== 'string' || (typeof c[1] !== 'string' && typeof c[1] !== 'number')) return undefined;
    const pivot = { value: c[1], id: c[2] };
    start = rows.findIndex((r) => cmp(r, pivot) > 0);
    if (start < 0) start = rows.length;
  }
  const page = rows.slice(start, start + limit);
  const last = page.at(-1);
  return { alerts: page.map((r) => r.a), total: rows.length, nextCursor: last && start + limit < rows.length ? encodeCursor([sort, last.value, last.id]) : undefined };
}
