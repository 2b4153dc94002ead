import {
  compileExceptionCondition,
  mappingFor,
  mappingKey,
  type CompiledException,
  type ExceptionTest,
} from '../detection/exception-condition.js';
import type { Accessor } from '../detection/logsources.js';
import { literalIndex, textsOf, type LiteralIndex } from '../detection/prefilter.js';
import type { CompiledSigma } from '../detection/types.js';
import type { EventData } from '../events/union.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import { exhaustive } from '../events/read.js';
import { instanceProjection } from './types.js';

/** What an exception applies to. */
export type ExceptionScope = EventData<'ExceptionCreated'>['scope'];

/** An exception's terms: its scope, condition, reason, owner, ticket and end. */
export interface ExceptionTerms {
  scope: ExceptionScope;
  detection: Record<string, unknown>;
  reason: string;
  owner: string;
  ticket?: string;
  /** When it stops applying; none: permanent. */
  expiresAt?: string;
}

/** One entry of an exception's history; `seq` is its record's, for an inclusion proof. */
export interface ExceptionHistoryEntry {
  at: string;
  seq: number;
  kind: 'created' | 'changed' | 'revoked' | 'expired' | 'reminded';
  principal?: string;
  authentication?: string;
  comment?: string;
  /** The terms set by a creation or a change. */
  terms?: ExceptionTerms;
  /** The reminder alert raised. */
  alertId?: string;
}

/** An exception as the routes show it. */
export interface ExceptionView extends ExceptionTerms {
  id: string;
  createdAt: string;
  createdBy: string;
  fromAlertId?: string;
  revokedAt?: string;
  /** When a check recorded its end (it stopped applying at `expiresAt` all the same). */
  expiredAt?: string;
  remindedAt?: string;
  /** Matches it kept from alerting, in all and by rule. */
  matchesExcepted: number;
  byRule: Record<string, number>;
  lastExceptedAt?: string;
  history: ExceptionHistoryEntry[];
}

/** Live exceptions by what they apply to, so a match looks only at those that can apply to its rule. */
interface ScopeIndex {
  byRule: Map<string, ExceptionView[]>;
  byTag: Map<string, ExceptionView[]>;
  all: ExceptionView[];
}

/** One exception that may apply to a rule: its condition compiled for the rule's logsource, and its end. */
interface Candidate {
  readonly e: ExceptionView;
  readonly test: ExceptionTest;
  readonly endMs: number;
}

/**
 * The exceptions that may apply to one rule, ready for its matches: those whose condition yields triggers are found by
 * one scan per trigger field of the match's event (an Aho-Corasick automaton over their literals, prefilter.ts), the
 * others are always tried. 1,000 exceptions for all rules then cost a match a few scans, not 1,000 tests.
 */
interface RulePlan {
  readonly candidates: readonly Candidate[];
  readonly always: readonly number[];
  readonly groups: ReadonlyArray<{ readonly get: Accessor; readonly index: LiteralIndex; readonly owners: number[][] }>;
}

/** The exceptions read model; `index`, `tests` and `plans` are derived (rebuilt when exceptions change). */
export interface ExceptionsState {
  exceptions: Map<string, ExceptionView>;
  /** Matches excepted by rule, over all exceptions (rule quality). */
  exceptedByRule: Map<string, number>;
  index?: ScopeIndex;
  /** `exceptionId \0 mapping key` -> the condition compiled for that logsource (null: it does not compile there). */
  tests: Map<string, CompiledException | null>;
  /** Each compiled rule's plan (a rule imported again is a new object, and gets a new plan). */
  plans?: WeakMap<CompiledSigma, RulePlan>;
}

/** Whether an exception applies at `nowMs`: not revoked, and before its `expiresAt` (if it has one). */
export function exceptionLive(e: ExceptionView, nowMs: number): boolean {
  if (e.revokedAt !== undefined) return false;
  return e.expiresAt === undefined || nowMs < Date.parse(e.expiresAt);
}

/** What an exception's state is at `nowMs`, as the routes and pages say it. */
export function exceptionStatus(e: ExceptionView, nowMs: number): 'active' | 'expired' | 'revoked' {
  if (e.revokedAt !== undefined) return 'revoked';
  return exceptionLive(e, nowMs) ? 'active' : 'expired';
}

function indexOf(s: ExceptionsState): ScopeIndex {
  if (s.index) return s.index;
  const index: ScopeIndex = { byRule: new Map(), byTag: new Map(), all: [] };
  const add = (map: Map<string, ExceptionView[]>, key: string, e: ExceptionView) => {
    const list = map.get(key);
    if (list) list.push(e);
    else map.set(key, [e]);
  };
  for (const e of s.exceptions.values()) {
    if (e.revokedAt !== undefined) continue;
    if (e.scope.kind === 'rule') add(index.byRule, e.scope.ruleId, e);
    else if (e.scope.kind === 'tag') add(index.byTag, e.scope.tag.toLowerCase(), e);
    else index.all.push(e);
  }
  s.index = index;
  return index;
}

/** Whether an exception's scope covers a rule. */
export function scopeCovers(scope: ExceptionScope, rule: { id: string; tags: readonly string[] }): boolean {
  if (scope.kind === 'all') return true;
  if (scope.kind === 'rule') return scope.ruleId === rule.id;
  const tag = scope.tag.toLowerCase();
  return rule.tags.some((t) => t.toLowerCase() === tag);
}

/** The condition of `e` compiled for `rule`'s logsource (cached in the state). */
function compiledFor(s: ExceptionsState, e: ExceptionView, rule: CompiledSigma): CompiledException | null {
  const key = `${e.id}\u0000${mappingKey(rule)}`;
  let compiled = s.tests.get(key);
  if (compiled === undefined) {
    const r = compileExceptionCondition(e.detection, mappingFor(rule));
    compiled = r.ok ? r.value : null;
    s.tests.set(key, compiled);
  }
  return compiled;
}

/** Whether an exception's condition holds on every event of a match (a correlation's too): none, no. */
export function exceptionHolds(
  s: ExceptionsState,
  e: ExceptionView,
  rule: CompiledSigma,
  events: readonly NormalizedEvent[],
): boolean {
  if (events.length === 0) return false;
  const compiled = compiledFor(s, e, rule);
  if (!compiled) return false;
  for (const event of events) if (!compiled.test(event)) return false;
  return true;
}

/** The plan of a rule: the exceptions that cover it (its id, its tags, all rules), in the order made. */
function planOf(s: ExceptionsState, rule: CompiledSigma): RulePlan {
  s.plans ??= new WeakMap();
  const known = s.plans.get(rule);
  if (known) return known;
  const index = indexOf(s);
  const covering = new Set<ExceptionView>(index.byRule.get(rule.id) ?? []);
  for (const tag of rule.tags) for (const e of index.byTag.get(tag.toLowerCase()) ?? []) covering.add(e);
  for (const e of index.all) covering.add(e);
  const candidates: Candidate[] = [];
  const always: number[] = [];
  const groups = new Map<string, { get: Accessor; literals: string[]; owners: number[][] }>();
  for (const e of [...s.exceptions.values()].filter((x) => covering.has(x))) {
    const compiled = compiledFor(s, e, rule);
    if (!compiled) continue;
    const at = candidates.push({ e, test: compiled.test, endMs: e.expiresAt ? Date.parse(e.expiresAt) : Infinity }) - 1;
    if (!compiled.triggers) {
      always.push(at);
      continue;
    }
    for (const t of compiled.triggers) {
      const key = `${t.field}\u0000${t.via}`;
      let g = groups.get(key);
      if (!g) groups.set(key, (g = { get: t.get, literals: [], owners: [] }));
      for (const lit of t.literals) {
        g.literals.push(lit);
        g.owners.push([at]);
      }
    }
  }
  const plan: RulePlan = {
    candidates,
    always,
    groups: [...groups.values()].map((g) => ({ get: g.get, index: literalIndex(g.literals), owners: g.owners })),
  };
  s.plans.set(rule, plan);
  return plan;
}

/**
 * The first exception (in the order made) live at `nowMs` that covers `rule` and whose condition holds on every event
 * of a match, or none. Only exceptions that can apply are tried: those covering the rule whose triggers the match's
 * first event satisfies, and those without triggers.
 */
export function exceptionFor(
  s: ExceptionsState,
  rule: CompiledSigma,
  events: readonly NormalizedEvent[],
  nowMs: number,
): ExceptionView | undefined {
  if (s.exceptions.size === 0 || events.length === 0) return undefined;
  const plan = planOf(s, rule);
  if (plan.candidates.length === 0) return undefined;
  const tried = new Set<number>(plan.always);
  const first = events[0]!;
  for (const g of plan.groups)
    textsOf(g.get(first), (text) => g.index.scan(text.toLowerCase(), (id) => tried.add(g.owners[id]![0]!)));
  let best: Candidate | undefined;
  let bestAt = Infinity;
  for (const at of tried) {
    if (at >= bestAt) continue;
    const c = plan.candidates[at]!;
    if (nowMs >= c.endMs) continue;
    if (events.every((event) => c.test(event))) {
      best = c;
      bestAt = at;
    }
  }
  return best?.e;
}

function termsOf(d: EventData<'ExceptionCreated'> | EventData<'ExceptionChanged'>): ExceptionTerms {
  return {
    scope: d.scope,
    detection: d.detection,
    reason: d.reason,
    owner: d.owner,
    ...(d.ticket !== undefined ? { ticket: d.ticket } : {}),
    ...(d.expiresAt !== undefined ? { expiresAt: d.expiresAt } : {}),
  };
}

function changed(s: ExceptionsState): void {
  s.index = undefined;
  s.plans = undefined;
  s.tests.clear();
}

/**
 * The exceptions analysts made: their terms, history and what they kept from alerting. A match is decided against the
 * exceptions live at its batch's time (src/commands/alerting/evaluate.ts), so an exception stops applying at its
 * `expiresAt` whether or not its expiry has been recorded yet.
 */
export const exceptionsProjection = instanceProjection({
  name: 'exceptions',
  version: 1,
  folds: [
    'ExceptionCreated',
    'ExceptionChanged',
    'ExceptionRevoked',
    'ExceptionExpired',
    'ExceptionExpiryReminded',
    'MatchesExcepted',
  ],
  initial: (): ExceptionsState => ({ exceptions: new Map(), exceptedByRule: new Map(), tests: new Map() }),
  evolve(s, record) {
    switch (record.type) {
      case 'ExceptionCreated': {
        const d = record.data;
        const terms = termsOf(d);
        s.exceptions.set(d.exceptionId, {
          id: d.exceptionId,
          ...terms,
          createdAt: record.at,
          createdBy: d.principal,
          ...(d.fromAlertId !== undefined ? { fromAlertId: d.fromAlertId } : {}),
          matchesExcepted: 0,
          byRule: {},
          history: [
            {
              at: record.at,
              seq: record.seq,
              kind: 'created',
              principal: d.principal,
              authentication: d.authentication,
              terms,
            },
          ],
        });
        changed(s);
        return s;
      }
      case 'ExceptionChanged': {
        const d = record.data;
        const e = s.exceptions.get(d.exceptionId);
        if (!e) return s;
        const terms = termsOf(d);
        delete e.ticket;
        delete e.expiresAt;
        // A new end is a new reminder: one is raised again before it.
        delete e.remindedAt;
        delete e.expiredAt;
        Object.assign(e, terms);
        e.history.push({
          at: record.at,
          seq: record.seq,
          kind: 'changed',
          principal: d.principal,
          authentication: d.authentication,
          comment: d.comment,
          terms,
        });
        changed(s);
        return s;
      }
      case 'ExceptionRevoked': {
        const d = record.data;
        const e = s.exceptions.get(d.exceptionId);
        if (!e) return s;
        e.revokedAt = record.at;
        e.history.push({
          at: record.at,
          seq: record.seq,
          kind: 'revoked',
          principal: d.principal,
          authentication: d.authentication,
          comment: d.comment,
        });
        changed(s);
        return s;
      }
      case 'ExceptionExpired': {
        const e = s.exceptions.get(record.data.exceptionId);
        if (!e) return s;
        e.expiredAt = record.at;
        e.history.push({ at: record.at, seq: record.seq, kind: 'expired' });
        return s;
      }
      case 'ExceptionExpiryReminded': {
        const e = s.exceptions.get(record.data.exceptionId);
        if (!e) return s;
        e.remindedAt = record.at;
        e.history.push({ at: record.at, seq: record.seq, kind: 'reminded', alertId: record.data.alertId });
        return s;
      }
      case 'MatchesExcepted':
        for (const m of record.data.matches) {
          s.exceptedByRule.set(m.ruleId, (s.exceptedByRule.get(m.ruleId) ?? 0) + 1);
          const e = s.exceptions.get(m.exceptionId);
          if (!e) continue;
          e.matchesExcepted += 1;
          e.byRule[m.ruleId] = (e.byRule[m.ruleId] ?? 0) + 1;
          if (e.lastExceptedAt === undefined || m.time > e.lastExceptedAt) e.lastExceptedAt = m.time;
        }
        return s;
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({ exceptions: [...s.exceptions.values()], exceptedByRule: [...s.exceptedByRule] }),
  restore(data) {
    const d = data as { exceptions: ExceptionView[]; exceptedByRule: Array<[string, number]> };
    return {
      exceptions: new Map(d.exceptions.map((e) => [e.id, e])),
      exceptedByRule: new Map(d.exceptedByRule),
      tests: new Map(),
    };
  },
});
