import type { NormalizedEvent } from '../events/normalized-event.js';
import { epochMillisOf } from '../kernel/time.js';
import { advanceCorrelations, type CorrelationFire, type CorrelationState, type RuleHit } from './correlate.js';
import { indexKeysForEvent, type Accessor } from './logsources.js';
import { literalIndex, textsOf, type LiteralIndex } from './prefilter.js';
import { lowerOf } from './wildcard.js';
import type { CompiledCorrelation, CompiledRule, MatchDetail } from './types.js';

/** One result of evaluating a rule set: a detection on one event or a correlation fire. */
export interface RuleMatch {
  readonly ruleId: string;
  readonly kind: 'detection' | 'correlation';
  readonly eventIds: string[];
  /** The event id for a detection; the correlation's group key for a fire. */
  readonly groupKey: string;
  readonly detail: MatchDetail | CorrelationFire;
  readonly timeMs: number;
}

/** A correlation reference that names no rule of the set (the correlation can never fire through it). */
export interface UnresolvedReference {
  readonly correlationId: string;
  readonly reference: string;
}

/** One evaluation in this many is timed when a meter is not `exact` (a power of two). */
export const METER_SAMPLE = 8;

/**
 * What one evaluation cost, per rule of `RuleSet.inline` (by index): evaluations and matches, time
 * and the event each rule took longest on. `touched` lists the rules evaluated at least once.
 *
 * Reading the clock twice per evaluation costs about as much as a cheap rule, so a meter that is not
 * `exact` times one evaluation in `METER_SAMPLE` (its `ms` then an estimate, the sample scaled up)
 * and each event's rules as a whole; an event whose rules took more than `slowEventMs` is named in
 * `slowEvent`, for the caller to time the next batches exactly. Only an exact meter's times say
 * which rule was slow.
 */
export interface RuleMeter {
  readonly evaluations: Float64Array;
  readonly matches: Float64Array;
  readonly ms: Float64Array;
  readonly slowestMs: Float64Array;
  readonly slowestEvent: Array<string | undefined>;
  readonly touched: number[];
  exact: boolean;
  slowEventMs: number;
  slowEvent: string | undefined;
  tick: number;
}

/** A meter for `n` rules, all zero. */
export function createMeter(n: number, exact = true, slowEventMs = 1): RuleMeter {
  return {
    evaluations: new Float64Array(n),
    matches: new Float64Array(n),
    ms: new Float64Array(n),
    slowestMs: new Float64Array(n),
    slowestEvent: new Array<string | undefined>(n).fill(undefined),
    touched: [],
    exact,
    slowEventMs,
    slowEvent: undefined,
    tick: 0,
  };
}

/** Sets a meter back to zero for the next evaluation (only the rules it touched). */
export function resetMeter(meter: RuleMeter): void {
  for (const i of meter.touched) {
    meter.evaluations[i] = 0;
    meter.matches[i] = 0;
    meter.ms[i] = 0;
    meter.slowestMs[i] = 0;
    meter.slowestEvent[i] = undefined;
  }
  meter.touched.length = 0;
  meter.slowEvent = undefined;
}

/** A match of a rule set aside (`RuleSet.isolated`), found elsewhere and handed back to `adopt`. */
export interface IsolatedMatch {
  readonly ruleId: string;
  readonly event: NormalizedEvent;
  readonly detail: MatchDetail;
}

/** How a rule set is built: `isolate` sets rules whose cost has no bound (`backtracks`) aside. */
export interface RuleSetOptions {
  readonly isolate?: boolean;
}

/** A set of compiled rules indexed for evaluation. */
export interface RuleSet {
  readonly unresolved: readonly UnresolvedReference[];
  readonly correlations: readonly CompiledCorrelation[];
  /** The detections `matchEvents` evaluates, in the order a meter counts them. */
  readonly inline: readonly CompiledRule[];
  /** The detections set aside (`isolate`): whoever built the set evaluates them and hands their matches to `adopt`. */
  readonly isolated: readonly CompiledRule[];
  /** Single-event detections: their matches, and the hits they offer to correlations; costs counted in `meter`. */
  matchEvents(events: readonly NormalizedEvent[], meter?: RuleMeter): { matches: RuleMatch[]; hits: RuleHit[] };
  /** The matches and hits of isolated rules' findings, as `matchEvents` would have given them. */
  adopt(found: readonly IsolatedMatch[]): { matches: RuleMatch[]; hits: RuleHit[] };
  /** Advances the correlations over hits; matches are the fires that raise alerts. Pure in `state`. */
  correlate(state: CorrelationState, hits: RuleHit[]): { state: CorrelationState; matches: RuleMatch[] };
  /** The event fields correlations read from a rule's hits (group-by, aliases, counted field). */
  hitFields(ruleId: string): readonly string[];
  /** Evaluates events in order: detections per event, then the correlations over the hits. Pure in `state`. */
  evaluate(state: CorrelationState, events: NormalizedEvent[]): { state: CorrelationState; matches: RuleMatch[] };
}

function referencesOf(
  rule: CompiledRule | CompiledCorrelation,
  correlations: readonly CompiledCorrelation[],
): CompiledCorrelation[] {
  return correlations.filter(
    (c) => c.rules.includes(rule.id) || (rule.name !== undefined && c.rules.includes(rule.name)),
  );
}

/**
 * Spec "generate": a rule referenced by correlations raises its own matches only if one of them says `generate: true`.
 */
function standalone(rule: CompiledRule | CompiledCorrelation, correlations: readonly CompiledCorrelation[]): boolean {
  const refs = referencesOf(rule, correlations);
  return refs.length === 0 || refs.some((c) => c.generate);
}

/** Correlation references that name no rule of the set, without building the set (imports check only this). */
export function unresolvedReferences(rules: readonly (CompiledRule | CompiledCorrelation)[]): UnresolvedReference[] {
  return unresolvedOf(
    rules,
    rules.filter((r): r is CompiledCorrelation => r.kind === 'correlation'),
  );
}

function unresolvedOf(
  rules: readonly (CompiledRule | CompiledCorrelation)[],
  correlations: readonly CompiledCorrelation[],
): UnresolvedReference[] {
  const known = new Set(rules.flatMap((r) => (r.name === undefined ? [r.id] : [r.id, r.name])));
  return correlations.flatMap((c) =>
    c.rules.filter((ref) => !known.has(ref)).map((reference) => ({ correlationId: c.id, reference })),
  );
}

/** Rules triggered through one field (read alike): an automaton over their literals, literal id -> rules. */
interface TriggerGroup {
  readonly get: Accessor;
  readonly index: LiteralIndex;
  readonly rulesOf: number[][];
}

/**
 * The rule index: per logsource key, the rules always tried and the trigger groups its rules use;
 * the groups are shared by every key, so a field an event has is scanned once however many of the
 * event's keys have rules on it.
 */
interface RuleIndex {
  readonly always: Map<string, number[]>;
  readonly groupsOf: Map<string, number[]>;
  readonly groups: TriggerGroup[];
}

function buildIndex(detections: readonly CompiledRule[]): RuleIndex {
  const always = new Map<string, number[]>();
  const groupsOf = new Map<string, Set<number>>();
  const building = new Map<string, { n: number; get: Accessor; literals: Map<string, number[]> }>();
  detections.forEach((rule, i) => {
    const keys = [...new Set(rule.indexKeys)];
    if (!rule.triggers) {
      for (const key of keys) {
        const list = always.get(key);
        if (list) list.push(i);
        else always.set(key, [i]);
      }
      return;
    }
    for (const t of rule.triggers) {
      const gk = `${t.field}\u0000${t.via}`;
      let group = building.get(gk);
      if (!group) building.set(gk, (group = { n: building.size, get: t.get, literals: new Map() }));
      for (const key of keys) {
        let of = groupsOf.get(key);
        if (!of) groupsOf.set(key, (of = new Set()));
        of.add(group.n);
      }
      for (const lit of t.literals) {
        const rules = group.literals.get(lit) ?? [];
        if (rules[rules.length - 1] !== i) rules.push(i);
        group.literals.set(lit, rules);
      }
    }
  });
  const groups = [...building.values()].map((g) => ({
    get: g.get,
    index: literalIndex([...g.literals.keys()]),
    rulesOf: [...g.literals.values()],
  }));
  return { always, groupsOf: new Map([...groupsOf].map(([k, v]) => [k, [...v].sort((a, b) => a - b)])), groups };
}

function hitFieldsOf(rule: CompiledRule, correlations: readonly CompiledCorrelation[]): string[] {
  const fields = new Set<string>();
  for (const c of referencesOf(rule, correlations)) {
    for (const g of [...c.groupBy, ...(c.field !== undefined ? [c.field] : [])]) {
      const alias = c.aliases[g];
      fields.add((alias && (alias[rule.id] ?? (rule.name !== undefined ? alias[rule.name] : undefined))) ?? g);
    }
  }
  return [...fields];
}

/** Indexes rules by logsource key so an event is only tried against rules that share one of its keys. */
export function createRuleSet(rules: Array<CompiledRule | CompiledCorrelation>, options: RuleSetOptions = {}): RuleSet {
  const all = rules.filter((r): r is CompiledRule => r.kind === 'detection');
  const detections = options.isolate ? all.filter((r) => !r.backtracks) : all;
  const isolated = options.isolate ? all.filter((r) => r.backtracks) : [];
  const correlations = rules.filter((r): r is CompiledCorrelation => r.kind === 'correlation');
  const index = buildIndex(detections);
  const raises = detections.map((r) => standalone(r, correlations));
  const feeds = detections.map((r) => referencesOf(r, correlations).length > 0);
  const firesAlone = new Map(correlations.map((c) => [c.id, standalone(c, correlations)]));
  // Marks the rules already tried on the current event (a rule may share several keys with it).
  const tried = new Float64Array(detections.length);
  // Marks the trigger groups already scanned for the current event, and the event's keys per rule check.
  const scanned = new Float64Array(index.groups.length);
  const ruleKeys = detections.map((r) => [...new Set(r.indexKeys)]);
  let pass = 0;

  function found(
    rule: CompiledRule,
    raise: boolean,
    feed: boolean,
    event: NormalizedEvent,
    detail: MatchDetail,
    out: { matches: RuleMatch[]; hits: RuleHit[] },
  ): void {
    const timeMs = epochMillisOf(event.time) ?? Number.NaN;
    if (raise)
      out.matches.push({
        ruleId: rule.id,
        kind: 'detection',
        eventIds: [event.id],
        groupKey: event.id,
        detail,
        timeMs,
      });
    if (feed)
      out.hits.push({
        ruleId: rule.id,
        eventId: event.id,
        timeMs,
        event,
        ...(rule.name !== undefined ? { ruleName: rule.name } : {}),
      });
  }

  /** One rule on one event, its outcome counted in the meter, its time when exact or sampled. */
  function metered(i: number, event: NormalizedEvent, meter: RuleMeter): MatchDetail | undefined {
    if (meter.evaluations[i] === 0) meter.touched.push(i);
    meter.evaluations[i] = meter.evaluations[i]! + 1;
    let detail: MatchDetail | undefined;
    if (meter.exact || (++meter.tick & (METER_SAMPLE - 1)) === 0) {
      const started = performance.now();
      detail = detections[i]!.match(event);
      const ms = performance.now() - started;
      meter.ms[i] = meter.ms[i]! + (meter.exact ? ms : ms * METER_SAMPLE);
      if (ms > meter.slowestMs[i]!) {
        meter.slowestMs[i] = ms;
        meter.slowestEvent[i] = event.id;
      }
    } else detail = detections[i]!.match(event);
    if (detail) meter.matches[i] = meter.matches[i]! + 1;
    return detail;
  }

  /** An event through the rules, timed as a whole when the meter is not exact. */
  function detectTimed(event: NormalizedEvent, out: { matches: RuleMatch[]; hits: RuleHit[] }, meter: RuleMeter): void {
    if (meter.exact) return detect(event, out, meter);
    const started = performance.now();
    detect(event, out, meter);
    if (performance.now() - started > meter.slowEventMs) meter.slowEvent ??= event.id;
  }

  function detect(event: NormalizedEvent, out: { matches: RuleMatch[]; hits: RuleHit[] }, meter?: RuleMeter): void {
    pass += 1;
    const attempt = (i: number): void => {
      if (tried[i] === pass) return;
      tried[i] = pass;
      const detail = meter ? metered(i, event, meter) : detections[i]!.match(event);
      if (detail) found(detections[i]!, raises[i]!, feeds[i]!, event, detail, out);
    };
    const keys = indexKeysForEvent(event);
    // A triggered rule is tried only when it shares a key with the event (groups serve every key).
    const triggered = (i: number): void => {
      if (tried[i] === pass) return;
      for (const k of ruleKeys[i]!)
        if (keys.includes(k)) {
          attempt(i);
          return;
        }
    };
    for (const key of keys) {
      for (const i of index.always.get(key) ?? []) attempt(i);
      // A rule with triggers is tried only when one of its literals occurs in its field (prefilter.ts).
      for (const n of index.groupsOf.get(key) ?? []) {
        if (scanned[n] === pass) continue;
        scanned[n] = pass;
        const g = index.groups[n]!;
        const value = g.get(event);
        if (value === undefined || value === null) continue;
        textsOf(value, (text) =>
          g.index.scan(lowerOf(text), (id) => {
            for (const i of g.rulesOf[id]!) triggered(i);
          }),
        );
      }
    }
  }

  const fieldsOf = new Map(detections.map((r) => [r.id, hitFieldsOf(r, correlations)]));
  function correlate(state: CorrelationState, hits: RuleHit[]): { state: CorrelationState; matches: RuleMatch[] } {
    const matches: RuleMatch[] = [];
    const next = advanceCorrelations(state, correlations, hits);
    for (const fire of next.fired) {
      if (!firesAlone.get(fire.correlationId)) continue;
      matches.push({
        ruleId: fire.correlationId,
        kind: 'correlation',
        eventIds: fire.eventIds,
        groupKey: fire.groupKey,
        detail: fire,
        timeMs: fire.lastMs,
      });
    }
    return { state: next.state, matches };
  }
  function matchEvents(
    events: readonly NormalizedEvent[],
    meter?: RuleMeter,
  ): { matches: RuleMatch[]; hits: RuleHit[] } {
    const out = { matches: [] as RuleMatch[], hits: [] as RuleHit[] };
    if (meter) for (const event of events) detectTimed(event, out, meter);
    else for (const event of events) detect(event, out);
    return out;
  }
  const aside = new Map(isolated.map((r) => [r.id, r]));
  function adopt(list: readonly IsolatedMatch[]): { matches: RuleMatch[]; hits: RuleHit[] } {
    const out = { matches: [] as RuleMatch[], hits: [] as RuleHit[] };
    for (const { ruleId, event, detail } of list) {
      const rule = aside.get(ruleId);
      if (rule)
        found(rule, standalone(rule, correlations), referencesOf(rule, correlations).length > 0, event, detail, out);
    }
    return out;
  }
  return {
    unresolved: unresolvedOf(rules, correlations),
    correlations,
    inline: detections,
    isolated,
    matchEvents,
    adopt,
    correlate,
    hitFields: (id) => fieldsOf.get(id) ?? [],
    evaluate(state, events) {
      const { matches, hits } = matchEvents(events);
      const next = correlate(state, hits);
      return { state: next.state, matches: [...matches, ...next.matches] };
    },
  };
}
