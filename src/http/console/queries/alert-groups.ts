import { LEVELS } from '../../../detection/types.js';
import type { AlertsState, AlertView } from '../../../projections/alerts.js';
import type { AlertFilter } from '../../../projections/alerts-query.js';
import type { DetectionState } from '../../../projections/detection.js';
import { decodeCursor, encodeCursor } from '../../../projections/cursor.js';
import { matches, queuePool } from './alert-queue.js';

/** Alerts an expanded group shows (the newest); the rest are one link away, in the flat list of its rule. */
export const GROUP_ROWS = 10;
/** Values a facet lists (the most frequent); the rest are counted together. */
export const FACET_VALUES = 12;

/**
 * The log source of a rule's alerts, as the queue's `source` facet names it. An alert does not record which
 * normalizer produced its evidence, so this is the source its rule reads: a detection rule's Sigma logsource
 * (`product/service`, or `product/category`), `correlation` for a correlation, `vigil` for Vigil's own rules
 * (`vigil.*`), and `rule removed` for a rule no longer installed.
 */
export function sourceOfRule(rules: DetectionState['rules'], ruleId: string): string {
  const rule = rules.get(ruleId);
  if (!rule) return ruleId.startsWith('vigil.') ? 'vigil' : 'rule removed';
  const c = rule.compiled;
  if (c.kind === 'correlation') return 'correlation';
  const ls = c.logsource;
  return [ls.product, ls.service ?? ls.category].filter((x) => x !== undefined).join('/') || 'any';
}

/** One rule's alerts in the grouped queue. */
export interface AlertGroup {
  readonly ruleId: string;
  /** The newest alert's title (the rule's title when it was raised). */
  readonly title: string;
  readonly level: string;
  /** The worst severity among them. */
  readonly severity: number;
  /** How many alerts, how many of them are not dismissed, how many group keys and systems they cover. */
  readonly alerts: number;
  readonly notDismissed: number;
  readonly groupKeys: number;
  readonly systems: number;
  readonly lastSeen: string;
  /** The newest GROUP_ROWS alerts, most recently seen first. */
  readonly newest: AlertView[];
}

/** Counts of one facet: value -> alerts, the most frequent first. */
export type Facet = ReadonlyArray<readonly [value: string, count: number]>;

/** The facets of the queue: counts over the alerts the current filter matches. */
export interface QueueFacets {
  /** Rule id -> alerts (with the title to show). */
  readonly rule: ReadonlyArray<readonly [ruleId: string, count: number, title: string]>;
  /** Level -> alerts of that level exactly (the filter is "at least", the page says so). */
  readonly severity: Facet;
  readonly status: Facet;
  /** Assignee -> alerts; `''` is nobody. */
  readonly assignee: Facet;
  readonly source: Facet;
  /** How many distinct values each facet had before it was cut at FACET_VALUES. */
  readonly distinct: Readonly<Record<'rule' | 'assignee' | 'source', number>>;
}

/** The grouped queue: how many alerts match, the groups of one page, the next page's cursor, and the facets. */
export interface GroupedQueue {
  readonly total: number;
  readonly groups: AlertGroup[];
  readonly groupsTotal: number;
  readonly nextCursor: string | undefined;
  readonly facets: QueueFacets;
}

interface Acc {
  ruleId: string;
  level: string;
  alerts: number;
  notDismissed: number;
  severity: number;
  lastSeen: string;
  keys: Set<string>;
  systems: Set<string>;
  newest: AlertView[];
}

const newestFirst = (a: AlertView, b: AlertView) =>
  a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** Groups in their order: the worst severity first, then the most recently seen, then by rule id. */
const groupOrder = (
  a: Pick<Acc, 'severity' | 'lastSeen' | 'ruleId'>,
  b: Pick<Acc, 'severity' | 'lastSeen' | 'ruleId'>,
) =>
  b.severity - a.severity ||
  (a.lastSeen < b.lastSeen ? 1 : a.lastSeen > b.lastSeen ? -1 : a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0);

function keepNewest(list: AlertView[], a: AlertView): void {
  if (list.length === GROUP_ROWS && newestFirst(a, list[GROUP_ROWS - 1]!) >= 0) return;
  let at = list.findIndex((x) => newestFirst(a, x) < 0);
  if (at < 0) at = list.length;
  list.splice(at, 0, a);
  if (list.length > GROUP_ROWS) list.pop();
}

const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);
const top = (m: Map<string, number>): Array<[string, number]> =>
  [...m].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, FACET_VALUES);

/** Where a group cursor points: the last group of the previous page. Undefined when it is not a group cursor. */
function groupCursor(cursor: string): Pick<Acc, 'severity' | 'lastSeen' | 'ruleId'> | undefined {
  const c = decodeCursor<unknown>(cursor);
  if (!Array.isArray(c) || c.length !== 4 || c[0] !== 'g') return undefined;
  const [, severity, lastSeen, ruleId] = c as unknown[];
  if (typeof severity !== 'number' || typeof lastSeen !== 'string' || typeof ruleId !== 'string') return undefined;
  return { severity, lastSeen, ruleId };
}

/**
 * One pass over the alerts the filter matches: one group per rule with its counts and
 * newest alerts, a page of `limit` groups after `cursor`, and the facets' counts. Undefined when the cursor is not
 * one of the grouped queue's.
 */
export function groupedQueue(
  s: AlertsState,
  f: AlertFilter,
  sourceOf: (ruleId: string) => string,
  limit: number,
  cursor?: string,
): GroupedQueue | undefined {
  const after = cursor !== undefined ? groupCursor(cursor) : undefined;
  if (cursor !== undefined && after === undefined) return undefined;
  const groups = new Map<string, Acc>();
  const counts = { severity: new Map<string, number>(), status: new Map<string, number>() };
  const assignee = new Map<string, number>();
  let total = 0;
  for (const a of queuePool(s, f)) {
    if (!matches(a, f)) continue;
    total++;
    let g = groups.get(a.ruleId);
    if (!g) {
      g = {
        ruleId: a.ruleId,
        level: a.level,
        alerts: 0,
        notDismissed: 0,
        severity: a.severity,
        lastSeen: '',
        keys: new Set(),
        systems: new Set(),
        newest: [],
      };
      groups.set(a.ruleId, g);
    }
    g.alerts++;
    if (a.status !== 'dismissed') g.notDismissed++;
    if (a.severity > g.severity) {
      g.severity = a.severity;
      g.level = a.level;
    }
    if (a.lastSeen > g.lastSeen) g.lastSeen = a.lastSeen;
    g.keys.add(a.groupKey);
    for (const sys of a.affectedSystems) g.systems.add(sys);
    keepNewest(g.newest, a);
    bump(counts.severity, a.level);
    bump(counts.status, a.status);
    bump(assignee, a.assignee ?? '');
  }
  // The rule and source facets follow from the groups: one lookup of a rule's source per rule, not per alert.
  const rule = new Map<string, number>();
  const source = new Map<string, number>();
  for (const g of groups.values()) {
    rule.set(g.ruleId, g.alerts);
    const src = sourceOf(g.ruleId);
    source.set(src, (source.get(src) ?? 0) + g.alerts);
  }
  const ordered = [...groups.values()].sort(groupOrder);
  const start = after ? ordered.findIndex((g) => groupOrder(g, after) > 0) : 0;
  const page = start < 0 ? [] : ordered.slice(start, start + limit);
  const last = page.at(-1);
  const more = start >= 0 && start + limit < ordered.length;
  return {
    total,
    groupsTotal: ordered.length,
    groups: page.map((g) => ({
      ruleId: g.ruleId,
      title: g.newest[0]!.title,
      level: g.level,
      severity: g.severity,
      alerts: g.alerts,
      notDismissed: g.notDismissed,
      groupKeys: g.keys.size,
      systems: g.systems.size,
      lastSeen: g.lastSeen,
      newest: g.newest,
    })),
    nextCursor: more && last ? encodeCursor(['g', last.severity, last.lastSeen, last.ruleId]) : undefined,
    facets: {
      rule: top(rule).map(([id, n]) => [id, n, groups.get(id)!.newest[0]!.title] as const),
      severity: LEVELS.filter((l) => counts.severity.has(l))
        .reverse()
        .map((l) => [l, counts.severity.get(l)!] as const),
      status: top(counts.status),
      assignee: top(assignee),
      source: top(source),
      distinct: { rule: rule.size, assignee: assignee.size, source: source.size },
    },
  };
}

/**
 * The filter of a queue's rule and source: the rules `rule` resolved to (none when it named no rule), narrowed to
 * those whose alerts come from `source` (`sourceOfRule`), as rule ids, so the API's filter (and a bulk review by
 * filter) means the same alerts.
 */
export function ruleAndSource(
  s: AlertsState,
  rule: Pick<AlertFilter, 'ruleId' | 'ruleIds'> | undefined,
  source: string | undefined,
  sourceOf: (ruleId: string) => string,
): Pick<AlertFilter, 'ruleId' | 'ruleIds'> | undefined {
  if (source === undefined) return rule;
  const named = rule?.ruleIds ?? (rule?.ruleId !== undefined ? [rule.ruleId] : undefined);
  const ids = new Set<string>();
  if (named) for (const id of named) if (sourceOf(id) === source) ids.add(id);
  if (!named)
    for (const a of s.alerts.values()) if (!ids.has(a.ruleId) && sourceOf(a.ruleId) === source) ids.add(a.ruleId);
  return { ruleIds: [...ids].sort() };
}
