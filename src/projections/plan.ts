import { describeLogsource } from '../detection/logsources.js';
import { describeSources, producedByVigil, sourceAction, sourceGuide } from '../detection/source-guide.js';
import type { Logsource } from '../detection/types.js';
import { epochMillisOf } from '../kernel/time.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import type { DetectionState, InstalledRule, RuleQuarantine } from './detection.js';
import type { SourcesState } from './sources.js';

/** The states of a plan entry, as the `state` filter takes them. */
export const PLAN_STATES = ['ready', 'degraded', 'blocked', 'quarantined'] as const;
/** A plan entry's state. */
export type PlanState = (typeof PLAN_STATES)[number];

/**
 * Why a rule cannot fire as it should, machine-readable, worst first: `quarantined` (over its time budget, it does
 * not evaluate), `logsource_unsupported` (nothing Vigil ships produces its logsource: AWS CloudTrail, Linux process
 * executions), `no_source_connected` (Vigil takes the logsource but nothing has sent it), `stale` (its sources went
 * quiet), `fields_never_seen` (the source is connected but a field the rule reads never appeared).
 */
export const PLAN_PROBLEMS = [
  'quarantined',
  'logsource_unsupported',
  'no_source_connected',
  'stale',
  'fields_never_seen',
] as const;
/** One of PLAN_PROBLEMS. */
export type PlanProblem = (typeof PLAN_PROBLEMS)[number];

/** A missing capability and the fix a user can act on (`fix` is prose for people; `problem` is for programs). */
export interface MissingCapability {
  readonly capability: string;
  readonly problem: Exclude<PlanProblem, 'quarantined'>;
  readonly fix: string;
}

/** One rule's line in the detection plan. */
export interface PlanEntry {
  readonly ruleId: string;
  readonly title: string;
  readonly author?: string;
  readonly enabled: boolean;
  /** `quarantined`: over its time budget at run time, it does not evaluate until a rule_admin enables it again. */
  readonly state: PlanState;
  /** The entry's worst problem (PLAN_PROBLEMS order); null when it is ready. */
  readonly problem: PlanProblem | null;
  /** The source it waits for: the `source` of its line in the plan's `fixes`; null when it waits for none. */
  readonly needs: string | null;
  /** The rule's tags (`attack.t1110`, `attack.credential-access`, ...), lower-cased. */
  readonly tags: string[];
  readonly requiredCapabilities: string[];
  readonly missingCapabilities: MissingCapability[];
  /** Why and when the rule was quarantined (state `quarantined`). */
  readonly quarantine?: RuleQuarantine;
}

/** The problems a fix can answer: a source to connect, one that does not exist yet, one gone quiet. */
export type FixProblem = 'logsource_unsupported' | 'no_source_connected' | 'stale';

/** What to do about one needed source, said once for every rule that needs it. */
export interface SourceFixGuide {
  /** The source, in words (`Windows Event Log channel Security`, `{product: aws, service: cloudtrail}`). */
  readonly describe: string;
  readonly problem: FixProblem;
  /** What to do, with what Vigil actually collects (or, plainly, that nothing does yet and what would). */
  readonly action: string;
  /** Where the set-up is documented. */
  readonly doc: string;
}

/** A line of the plan's `fixes`: a needed source, what to do, and how many enabled rules it would unblock. */
export interface PlanFix extends SourceFixGuide {
  /** The source's id: the `needs` of its rules, and the plan's `source` filter. */
  readonly source: string;
  readonly rules: number;
}

/** The detection plan's summary as it always was: counts per state among enabled rules, and the disabled ones. */
export interface PlanStateCounts {
  rules: number;
  ready: number;
  degraded: number;
  blocked: number;
  quarantined: number;
  disabled: number;
}

/** The detection plan (spec 2.10): every rule's state and a summary. */
export interface DetectionPlan {
  readonly generatedAt: string;
  readonly freshnessHours: number;
  readonly summary: PlanStateCounts;
  /** Sorted by title, then rule id (the order of the paged plan). */
  readonly rules: PlanEntry[];
  /** What to do for each `needs` of the entries. */
  readonly guides: ReadonlyMap<string, SourceFixGuide>;
  /** Per rule id: title, id and description lower-cased, what the `text` filter searches. */
  readonly searchText: ReadonlyMap<string, string>;
}

/** A human name for a detection source key (`zeek:dns` -> `network-monitor logType=dns`). */
export function describeSource(key: string): string {
  return sourceGuide(key).describe;
}

function fieldSeen(field: string, sources: SourcesState, keys: readonly string[]): boolean {
  // Dotted paths into the event (`attributes.target.type`, `actor.user`) and the event's own fields are
  // always present when the source is; attribute names must have been observed.
  if (/^(attributes|actor|sourceEndpoint|destinationEndpoint|service|correlation|source)\./.test(field)) return true;
  if (['category', 'class', 'activity', 'outcome', 'severity', 'time', 'id'].includes(field)) return true;
  return keys.some((k) => sources.get(k)?.fields.has(field));
}

/** The id of an unmapped logsource in `fixes`: `logsource:product=aws,service=cloudtrail`. */
function logsourceId(ls: Logsource): string {
  const parts = (['product', 'category', 'service'] as const)
    .filter((k) => ls[k] !== undefined)
    .map((k) => `${k}=${String(ls[k]).toLowerCase()}`);
  return `logsource:${parts.join(',')}`;
}

type Detection = Extract<InstalledRule['compiled'], { kind: 'detection' }>;

interface Planned {
  readonly entry: PlanEntry;
  readonly guide?: SourceFixGuide;
}

function planRule(
  rule: InstalledRule,
  byRef: ReadonlyMap<string, Detection>,
  sources: SourcesState,
  nowMs: number,
  freshMs: number,
  freshnessHours: number,
): Planned {
  const c = rule.compiled;
  const detections =
    c.kind === 'detection'
      ? [c]
      : [...new Set(c.rules.map((ref) => byRef.get(ref)).filter((d): d is Detection => d !== undefined))];
  const keys = [...new Set(detections.flatMap((d) => d.indexKeys))];
  const fields = [...new Set(detections.flatMap((d) => d.fields))];
  const required = [...keys.map(describeSource), ...fields.map((f) => `field ${f}`)];
  const missing: MissingCapability[] = [];
  const guides: Array<{ id: string; guide: SourceFixGuide }> = [];
  const seen = keys.filter((k) => sources.has(k));
  const unmapped = detections.filter((d) => d.unmapped !== undefined);
  for (const d of unmapped) {
    const id = logsourceId(d.logsource);
    missing.push({
      capability: `logsource ${describeLogsource(d.logsource)}`,
      problem: 'logsource_unsupported',
      fix:
        `unmapped logsource ${describeLogsource(d.logsource)}: nothing Vigil ships produces it ` +
        `(see docs/detections.md#logsource-mapping)`,
    });
    guides.push({
      id,
      guide: {
        describe: describeLogsource(d.logsource),
        problem: 'logsource_unsupported',
        action: 'none yet: no Vigil normalizer or collector produces these events',
        doc: 'docs/detections.md#logsource-mapping',
      },
    });
  }
  if (unmapped.length > 0 && keys.length === 0) {
    // Nothing else to say: no Vigil source can feed the rule.
  } else if (seen.length === 0) {
    const described = describeSources(keys) || 'a source';
    const unsupported = keys.length > 0 && keys.every((k) => !producedByVigil(k));
    const problem = unsupported ? 'logsource_unsupported' : 'no_source_connected';
    const id = keys.join(',');
    const doc = keys.length > 0 ? sourceGuide(keys[0]!).doc : 'docs/detections.md';
    missing.push({
      capability: described,
      problem,
      fix: unsupported
        ? `nothing Vigil ships produces ${described} yet (see ${doc})`
        : `connect ${described} (see ${doc})`,
    });
    guides.push({ id, guide: { describe: described, problem, action: sourceAction(keys), doc } });
  } else {
    const fresh = seen.filter((k) => nowMs - (epochMillisOf(sources.get(k)!.lastIngestedAt) ?? 0) <= freshMs);
    const described = describeSources(seen);
    if (fresh.length === 0) {
      const last = seen
        .map((k) => sources.get(k)!.lastIngestedAt)
        .sort()
        .at(-1);
      missing.push({
        capability: described,
        problem: 'stale',
        fix: `${described}: no records in the last ${freshnessHours} h (last at ${last})`,
      });
      guides.push({
        id: seen.join(','),
        guide: {
          describe: described,
          problem: 'stale',
          action:
            `nothing arrived in the last ${freshnessHours} h (last at ${last}): check that the source still sends ` +
            `(${sourceGuide(seen[0]!).how})`,
          doc: sourceGuide(seen[0]!).doc,
        },
      });
    }
    for (const f of fields) {
      if (!fieldSeen(f, sources, seen))
        missing.push({
          capability: `field ${f}`,
          problem: 'fields_never_seen',
          fix:
            `field ${f} has never been seen in ${described}; check the source's configuration or the rule's ` +
            'field name',
        });
    }
  }
  const worst = PLAN_PROBLEMS.find((p) =>
    p === 'quarantined' ? rule.quarantine !== undefined : missing.some((m) => m.problem === p),
  );
  const state: PlanState = rule.quarantine
    ? 'quarantined'
    : missing.some((m) => m.problem === 'no_source_connected' || m.problem === 'logsource_unsupported')
      ? 'blocked'
      : missing.length > 0
        ? 'degraded'
        : 'ready';
  // The source a rule waits for: that of its worst problem a source can answer.
  const needed = guides.find((g) => g.guide.problem === worst) ?? guides[0];
  return {
    entry: {
      ruleId: rule.id,
      title: c.title,
      ...(c.author !== undefined ? { author: c.author } : {}),
      enabled: rule.enabled,
      state,
      problem: worst ?? null,
      needs: needed?.id ?? null,
      tags: c.tags.map((t) => t.toLowerCase()),
      requiredCapabilities: required,
      missingCapabilities: missing,
      ...(rule.quarantine ? { quarantine: rule.quarantine } : {}),
    },
    ...(needed ? { guide: needed.guide } : {}),
  };
}

const collator = new Intl.Collator('en');

/** The plan's order: by title, then by rule id (a total order, so a cursor resumes exactly). */
function byTitle(a: Pick<PlanEntry, 'title' | 'ruleId'>, b: Pick<PlanEntry, 'title' | 'ruleId'>): number {
  return collator.compare(a.title, b.title) || (a.ruleId < b.ruleId ? -1 : a.ruleId > b.ruleId ? 1 : 0);
}

/** Counts per state among enabled rules, and the disabled ones: the plan's `summary` as it always was. */
export function planStateCounts(entries: readonly PlanEntry[]): PlanStateCounts {
  const out: PlanStateCounts = {
    rules: entries.length,
    ready: 0,
    degraded: 0,
    blocked: 0,
    quarantined: 0,
    disabled: 0,
  };
  for (const e of entries) {
    if (e.enabled) out[e.state] += 1;
    else out.disabled += 1;
  }
  return out;
}

/**
 * Which rules can fire: quarantined when the rule went over its time budget (it does not evaluate),
 * blocked when no source of the rule's logsource was ever seen or none can exist, degraded when
 * the sources are stale (nothing within the freshness window) or a referenced field was never
 * observed, ready otherwise. A correlation needs what the rules it references need.
 */
export function detectionPlan(
  det: DetectionState,
  sources: SourcesState,
  now: Date,
  freshnessHours: number,
): DetectionPlan {
  const freshMs = freshnessHours * 3600 * 1000;
  const byRef = new Map<string, Detection>();
  for (const r of det.rules.values()) {
    const d = r.compiled;
    if (d.kind !== 'detection') continue;
    byRef.set(d.id, d);
    if (d.name !== undefined && !byRef.has(d.name)) byRef.set(d.name, d);
  }
  const guides = new Map<string, SourceFixGuide>();
  const searchText = new Map<string, string>();
  const rules: PlanEntry[] = [];
  for (const r of det.rules.values()) {
    const { entry, guide } = planRule(r, byRef, sources, now.getTime(), freshMs, freshnessHours);
    rules.push(entry);
    if (guide && entry.needs !== null && !guides.has(entry.needs)) guides.set(entry.needs, guide);
    searchText.set(r.id, `${r.compiled.title}\n${r.id}\n${r.compiled.description ?? ''}`.toLowerCase());
  }
  rules.sort(byTitle);
  return { generatedAt: now.toISOString(), freshnessHours, summary: planStateCounts(rules), rules, guides, searchText };
}

/**
 * Entries on a page of the plan when the request names no `limit`: an entry weighs about 650 bytes of JSON and every
 * page also carries the summary and the fixes of all that matches (about 35 KB with SigmaHQ's rules), so 50 keeps the
 * first page near 70 KB. The largest `limit` is the other lists' (`limits.pageSize`).
 */
export const PLAN_PAGE_SIZE = 50;

/** The filters of the paged plan; every one given must hold. */
export interface PlanFilter {
  readonly state?: PlanState;
  readonly problem?: PlanProblem;
  /** A source id (`needs`, a line of `fixes`) or a source key the rule reads (`win:cat:process_creation`). */
  readonly source?: string;
  /** A tag, case-insensitive; a technique (`attack.t1059`) also matches its sub-techniques (`attack.t1059.001`). */
  readonly tag?: string;
  /** Case-insensitive text in the rule's title, id or description. */
  readonly text?: string;
}

/** Whether a rule reads a source key: the id of its `needs`, or one of the keys that id is made of. */
function readsSource(e: PlanEntry, source: string): boolean {
  return e.needs !== null && (e.needs === source || e.needs.split(',').includes(source));
}

function hasTag(e: PlanEntry, tag: string): boolean {
  const t = tag.toLowerCase();
  const technique = /^attack\.t\d{4}$/.test(t);
  return e.tags.some((x) => x === t || (technique && x.startsWith(`${t}.`)));
}

/** The entries of the plan that match a filter, in the plan's order. */
export function matchingEntries(plan: DetectionPlan, f: PlanFilter): PlanEntry[] {
  const text = f.text?.toLowerCase();
  return plan.rules.filter(
    (e) =>
      (f.state === undefined || e.state === f.state) &&
      (f.problem === undefined ||
        e.problem === f.problem ||
        (f.problem !== 'quarantined' && e.missingCapabilities.some((m) => m.problem === f.problem))) &&
      (f.source === undefined || readsSource(e, f.source)) &&
      (f.tag === undefined || hasTag(e, f.tag)) &&
      (text === undefined || (plan.searchText.get(e.ruleId) ?? '').includes(text)),
  );
}

/** The plan's summary over a set of entries: counts per state (as always), per problem and per missing source. */
export interface PlanSummary extends PlanStateCounts {
  /** Enabled rules per worst problem (every problem named, zeros included). */
  byProblem: Record<PlanProblem, number>;
  /**
   * Enabled rules per source they wait for (`needs`: the `source` of a line of `fixes`), most first; quarantined ones
   * are left out, since the source would not unblock them.
   */
  byMissingSource: Record<string, number>;
}

/**
 * The counts of a set of plan entries. The plan's `summary` and `vigil rules import`'s summary both come from here, so
 * they cannot disagree.
 */
export function planSummary(entries: readonly PlanEntry[]): PlanSummary {
  const byProblem = Object.fromEntries(PLAN_PROBLEMS.map((p) => [p, 0])) as Record<PlanProblem, number>;
  const bySource = new Map<string, number>();
  for (const e of entries) {
    if (!e.enabled) continue;
    if (e.problem !== null) byProblem[e.problem] += 1;
    // A quarantined rule stays quarantined when its source comes: it is not among those a fix would unblock.
    if (e.needs !== null && e.state !== 'quarantined') bySource.set(e.needs, (bySource.get(e.needs) ?? 0) + 1);
  }
  return {
    ...planStateCounts(entries),
    byProblem,
    byMissingSource: Object.fromEntries([...bySource.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))),
  };
}

/** The plan's `fixes` for a summary's entries: one line per needed source, the most rules unblocked first. */
export function planFixes(plan: DetectionPlan, summary: PlanSummary): PlanFix[] {
  return Object.entries(summary.byMissingSource).flatMap(([source, rules]) => {
    const guide = plan.guides.get(source);
    return guide ? [{ source, ...guide, rules }] : [];
  });
}

/** One page of the plan: the summary and fixes of everything the filter matches, and its entries from the cursor. */
export interface PlanPage {
  readonly generatedAt: string;
  readonly freshnessHours: number;
  readonly summary: PlanSummary;
  readonly fixes: PlanFix[];
  readonly rules: PlanEntry[];
  readonly nextCursor: string | null;
}

/** The plan's entries matching a filter, `limit` of them after the cursor; undefined when the cursor is not ours. */
export function planPage(plan: DetectionPlan, f: PlanFilter, limit: number, cursor?: string): PlanPage | undefined {
  let after: { title: string; ruleId: string } | undefined;
  if (cursor !== undefined) {
    const c = decodeCursor<unknown>(cursor);
    if (!Array.isArray(c) || c.length !== 2 || c[0] !== 'plan' || !Array.isArray(c[1])) return undefined;
    const [title, ruleId] = c[1] as unknown[];
    if (typeof title !== 'string' || typeof ruleId !== 'string') return undefined;
    after = { title, ruleId };
  }
  const all = matchingEntries(plan, f);
  const start = after ? all.findIndex((e) => byTitle(e, after) > 0) : 0;
  const rules = start < 0 ? [] : all.slice(start, start + limit);
  const last = rules.at(-1);
  const more = start >= 0 && start + limit < all.length;
  const summary = planSummary(all);
  return {
    generatedAt: plan.generatedAt,
    freshnessHours: plan.freshnessHours,
    summary,
    fixes: planFixes(plan, summary),
    rules,
    nextCursor: more && last ? encodeCursor(['plan', [last.title, last.ruleId]]) : null,
  };
}
