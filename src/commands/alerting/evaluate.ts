import type { CommandContext, DomainEvent } from '../decision.js';
import {
  DetectionRecord,
  type AlertEvidenceAdded,
  type AlertRaised,
  type DetectionHitsRecorded,
  type RecordedHit,
  type MatchesExcepted,
} from '../../events/detection-records.js';
import type { NormalizedEvent } from '../../events/normalized-event.js';
import { alertKey, systemsKept, type AlertsState } from '../../projections/alerts.js';
import { SYSTEMS_LISTED } from '../../projections/alerts-query.js';
import {
  activeRuleSet,
  effectiveSuppression,
  hitsFromRecord,
  type DetectionState,
} from '../../projections/detection.js';
import { alertSuppression, suppressedGroup, withinWindow } from './suppression.js';
import { quarantineEvents } from './quarantine.js';
import type { RunRules } from './rule-runner.js';
import { lookupEvent } from '../../projections/evidence.js';
import type { WriteModels } from '../../projections/models.js';
import { epochMillisOf } from '../../kernel/time.js';
import { affectedSystems, alertIdOf, confidenceOf, correlationReason, evidenceOf } from './alert-facts.js';
import type { CorrelationFire, RuleHit } from '../../detection/correlate.js';
import type { RuleMatch } from '../../detection/engine.js';
import { correlateIncidents, type IncidentSettings, type IncidentSummary } from './incident-correlation.js';
import { eventFieldValue } from '../../detection/logsources.js';
import type { CompiledCorrelation, MatchDetail } from '../../detection/types.js';
import { exceptionFor, type ExceptionsState } from '../../projections/exceptions.js';

/** An alert raised or updated by one evaluation, as the ingestion result lists it. */
export interface AlertSummary {
  readonly id: string;
  readonly status: string;
  readonly ruleId: string;
  readonly title: string;
  readonly author?: string;
  readonly severity: number;
  readonly confidence: number;
  /**
   * Its first SYSTEMS_LISTED affected systems; `affectedSystemsCount` counts all it keeps, `affectedSystemsComplete`
   * says whether it keeps all.
   */
  readonly affectedSystems: readonly string[];
  readonly affectedSystemsCount: number;
  readonly affectedSystemsComplete: boolean;
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly raised: boolean;
}

/** What evaluating evidence adds: the events to append, and the alerts and incidents involved. */
export interface DetectionOutcome {
  readonly events: DomainEvent[];
  readonly alerts: AlertSummary[];
  readonly incidents: IncidentSummary[];
}

/** Settings of detection (from the instance config). */
export interface DetectionSettings extends IncidentSettings {}

/** The state alerting reads: rules and correlation windows, alerts and incidents, stored evidence. */
export interface AlertingState {
  readonly detection: DetectionState;
  readonly alerts: AlertsState;
  /** The exceptions analysts made: a match one of them covers is recorded as excepted, not alerted. */
  readonly exceptions: ExceptionsState;
  /** A stored event by id (evidence of earlier batches, for correlations that span batches). */
  readonly storedEvent: (id: string) => NormalizedEvent | undefined;
}

/** The alerting slice of the write side's models. */
export function alertingStateOf(models: WriteModels): AlertingState {
  const decoded = new Map<number, readonly NormalizedEvent[]>();
  return {
    detection: models.detection,
    alerts: models.alerts,
    exceptions: models.exceptions,
    storedEvent: (id) => lookupEvent(models, id, decoded),
  };
}

/** A record this evaluation builds up before it is appended. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const isoOfMs = (ms: number, fallback: string) => (Number.isFinite(ms) ? new Date(ms).toISOString() : fallback);

function recordHits(hits: readonly RuleHit[], fieldsOf: (id: string) => readonly string[]): RecordedHit[] {
  return hits.map((h) => {
    const v: Record<string, unknown> = {};
    for (const f of fieldsOf(h.ruleId)) {
      const value = eventFieldValue(h.event, f);
      if (value !== undefined) v[f] = value;
    }
    return {
      ruleId: h.ruleId,
      ...(h.ruleName !== undefined ? { ruleName: h.ruleName } : {}),
      eventId: h.eventId,
      timeMs: h.timeMs,
      values: v,
    };
  });
}

/**
 * Evaluates evidence against the enabled rules: detections per event, correlations over the
 * recorded hits, alerts raised or grown (no alert storms: one open alert per rule and group),
 * and incidents correlated from alerts that share affected systems; a rule over its time budget is
 * quarantined (quarantine.ts). Pure but for `run`, which measures: the state comes in, the events to
 * append go out (the hits and quarantines are recorded, so the rules never run again on replay).
 */
export function evaluateEvidence(
  state: AlertingState,
  evidence: readonly NormalizedEvent[],
  ctx: CommandContext,
  settings: DetectionSettings,
  run: RunRules,
): DetectionOutcome {
  const det = state.detection;
  if (evidence.length === 0 || det.rules.size === 0) return { events: [], alerts: [], incidents: [] };
  const rs = activeRuleSet(det);
  const { matches, hits, overruns } = run(det, evidence);
  const events: DomainEvent[] = [];
  if (hits.length > 0) {
    const recorded: DetectionHitsRecorded = { hits: recordHits(hits, rs.hitFields) };
    events.push({ type: DetectionRecord.DetectionHitsRecorded, data: recorded });
    matches.push(...rs.correlate(det.correlation, hitsFromRecord(recorded)).matches);
  }
  const quarantined = overruns.length > 0 ? quarantineEvents(det, state.alerts, overruns, ctx) : [];
  if (matches.length === 0) return { events: [...events, ...quarantined], alerts: [], incidents: [] };
  const byId = new Map(evidence.map((e) => [e.id, e]));
  const find = (id: string) => byId.get(id) ?? state.storedEvent(id);
  const alerting = exceptMatches(state.exceptions, det, matches, find, ctx.now);
  if (alerting.excepted) events.push({ type: 'MatchesExcepted', data: alerting.excepted });
  if (alerting.matches.length === 0) return { events: [...events, ...quarantined], alerts: [], incidents: [] };
  const alertsState = state.alerts;
  // Alerts raised by this evaluation, by rule and group key (later matches of the batch join them).
  const raisedHere = new Map<string, Mutable<AlertRaised>>();
  const raisedIds = new Set<string>();
  const grown = new Map<string, Mutable<AlertEvidenceAdded>>();
  // The systems of each record raised or grown here, as a set: a scan brings thousands to one alert in one batch.
  const systemSets = new WeakMap<object, Set<string>>();
  const addSystems = (rec: { affectedSystems: string[] }, systems: readonly string[]) => {
    let set = systemSets.get(rec);
    if (!set) systemSets.set(rec, (set = new Set(rec.affectedSystems)));
    for (const sys of systems) {
      if (set.has(sys)) continue;
      set.add(sys);
      rec.affectedSystems.push(sys);
    }
  };
  for (const m of alerting.matches) applyMatch(m);
  const raised = [...raisedHere.values()];
  events.push(...raised.map((data) => ({ type: DetectionRecord.AlertRaised, data })));
  events.push(...[...grown.values()].map((data) => ({ type: DetectionRecord.AlertEvidenceAdded, data })));
  const incidents = correlateIncidents(alertsState, raised, settings);
  events.push(...incidents.events, ...quarantined);
  // The systems the alerts model will keep (projections/alerts.ts bounds them), its records applied in this order.
  let links = alertsState.systemLinks;
  const keep = (had: number, fresh: number): number => {
    const kept = systemsKept(had, fresh, links);
    links += kept;
    return kept;
  };
  const alerts: AlertSummary[] = [
    ...raised.map((a) => summary(a, keep(0, a.affectedSystems.length))),
    ...[...grown.values()].map((g) => {
      const a = alertsState.alerts.get(g.alertId)!;
      const fresh = [...new Set(g.affectedSystems)].filter((sys) => alertsState.bySystem.get(sys)?.has(a.id) !== true);
      const kept = keep(a.affectedSystems.length, fresh.length);
      return {
        id: a.id,
        status: a.status,
        ruleId: a.ruleId,
        title: a.title,
        ...(a.author !== undefined ? { author: a.author } : {}),
        severity: a.severity,
        confidence: g.confidence,
        affectedSystems: [
          ...a.affectedSystems.slice(0, SYSTEMS_LISTED),
          ...fresh.slice(0, Math.min(kept, SYSTEMS_LISTED)),
        ].slice(0, SYSTEMS_LISTED),
        affectedSystemsCount: a.affectedSystems.length + kept,
        affectedSystemsComplete: a.affectedSystemsComplete && kept === fresh.length,
        firstSeen: a.firstSeen,
        lastSeen: g.lastSeen > a.lastSeen ? g.lastSeen : a.lastSeen,
        raised: false,
      };
    }),
  ];
  return { events, alerts, incidents: incidents.summaries };

  /**
   * Folds one match into the alerts: it grows the alert of its rule and group key that is not dismissed (one
   * raised earlier in this batch, else the open one), or raises a new alert. With a suppression (the rule's, or
   * the API's), the group key is made of the `by` fields' values, and an alert takes matches only until its
   * window ends (event time); each match it takes after the first is counted as suppressed.
   */
  function applyMatch(m: RuleMatch): void {
    const installed = det.rules.get(m.ruleId);
    const rule = installed?.compiled;
    if (!installed || !rule) return;
    const evs = m.eventIds.map(find).filter((e): e is NormalizedEvent => e !== undefined);
    const systems = [...new Set(evs.flatMap(affectedSystems))].sort().slice(0, 64);
    const suppress = effectiveSuppression(installed);
    const group = suppress ? suppressedGroup(suppress, m, evs[0]) : undefined;
    // A detection groups by its first affected system; without one, all its matches share one alert.
    const groupKey = group?.groupKey ?? (m.kind === 'correlation' ? m.groupKey : (systems[0] ?? '-'));
    const key = alertKey(rule.id, groupKey);
    const times = evs.map((e) => epochMillisOf(e.time) ?? Number.NaN).filter(Number.isFinite);
    const first = isoOfMs(Math.min(...times), ctx.now);
    const last = isoOfMs(Math.max(...times), ctx.now);
    const matchMs = Number.isFinite(m.timeMs) ? m.timeMs : (epochMillisOf(ctx.now) ?? 0);
    const refs = evs.map(evidenceOf);
    const suppressed = group ? 1 : 0;
    let local = raisedHere.get(key);
    if (local && !withinWindow(local, matchMs)) {
      // Its window is over: the alert raised here stays as it is, and this match raises the next one.
      raisedHere.delete(key);
      raisedHere.set(`${key}\u0000${local.alertId}`, local);
      local = undefined;
    }
    const stateId = local ? undefined : alertsState.openByKey.get(key);
    const openId =
      stateId !== undefined && withinWindow(alertsState.alerts.get(stateId)!, matchMs) ? stateId : undefined;
    // The records raised or grown here are this evaluation's own: later matches of the batch add to them in place.
    if (local) {
      local.evidence.push(...refs);
      addSystems(local, systems);
      if (last > local.lastSeen) local.lastSeen = last;
      local.confidence = confidenceOf(rule, local.evidence.length);
      if (suppressed > 0) local.suppressed = (local.suppressed ?? 0) + suppressed;
    } else if (openId !== undefined) {
      const existing = alertsState.alerts.get(openId)!;
      const prior = grown.get(openId);
      if (prior) {
        prior.evidence.push(...refs);
        addSystems(prior, systems);
        if (last > prior.lastSeen) prior.lastSeen = last;
        prior.confidence = confidenceOf(rule, existing.evidenceCount + prior.evidence.length);
        if (suppressed > 0) prior.suppressed = (prior.suppressed ?? 0) + suppressed;
      } else
        grown.set(openId, {
          alertId: openId,
          evidence: refs,
          affectedSystems: [...new Set(systems)],
          lastSeen: last,
          confidence: confidenceOf(rule, existing.evidenceCount + refs.length),
          ...(suppressed > 0 ? { suppressed } : {}),
        });
    } else {
      let alertId = alertIdOf(rule.id, groupKey, m.eventIds[0] ?? ctx.now);
      for (let n = 2; alertsState.alerts.has(alertId) || raisedIds.has(alertId); n++)
        alertId = `${alertIdOf(rule.id, groupKey, m.eventIds[0] ?? ctx.now)}-${n}`;
      const reason: MatchDetail | ReturnType<typeof correlationReason> =
        m.kind === 'correlation'
          ? correlationReason(rule as CompiledCorrelation, m.detail as CorrelationFire)
          : (m.detail as MatchDetail);
      raisedIds.add(alertId);
      raisedHere.set(key, {
        alertId,
        ruleId: rule.id,
        groupKey,
        title: rule.title,
        ...(rule.author !== undefined ? { author: rule.author } : {}),
        level: rule.level,
        severity: rule.severity,
        confidence: confidenceOf(rule, refs.length),
        matchReason: reason,
        evidence: refs,
        affectedSystems: systems,
        firstSeen: first,
        lastSeen: last,
        tags: rule.tags,
        ...(suppress && group ? { suppression: alertSuppression(suppress, group, matchMs) } : {}),
      });
    }
  }
}

/** A raised alert as the ingestion result lists it, `kept` of its systems kept. */
function summary(a: AlertRaised, kept: number): AlertSummary {
  return {
    id: a.alertId,
    status: 'open',
    ruleId: a.ruleId,
    title: a.title,
    ...(a.author !== undefined ? { author: a.author } : {}),
    severity: a.severity,
    confidence: a.confidence,
    affectedSystems: a.affectedSystems.slice(0, Math.min(kept, SYSTEMS_LISTED)),
    affectedSystemsCount: kept,
    affectedSystemsComplete: kept === a.affectedSystems.length,
    firstSeen: a.firstSeen,
    lastSeen: a.lastSeen,
    raised: true,
  };
}

/** Most event ids one excepted match records (a correlation over a flood has thousands; the count says the rest). */
const EXCEPTED_IDS_KEPT = 100;

/**
 * Sets apart the matches an exception covers (docs/detections.md, "Exceptions"): each is recorded in one
 * `MatchesExcepted` (its events stay stored as evidence) and raises nothing. An exception applies when it is live at
 * the batch's time and its condition holds on every event of the match. Pure.
 */
export function exceptMatches(
  exceptions: ExceptionsState,
  det: DetectionState,
  matches: readonly RuleMatch[],
  find: (id: string) => NormalizedEvent | undefined,
  now: string,
): { matches: readonly RuleMatch[]; excepted?: MatchesExcepted } {
  if (exceptions.exceptions.size === 0) return { matches };
  const nowMs = Date.parse(now);
  const kept: RuleMatch[] = [];
  const excepted: Mutable<MatchesExcepted>['matches'] = [];
  for (const m of matches) {
    const rule = det.rules.get(m.ruleId)?.compiled;
    const evs = rule ? m.eventIds.map(find).filter((e): e is NormalizedEvent => e !== undefined) : [];
    const exception = rule ? exceptionFor(exceptions, rule, evs, nowMs) : undefined;
    if (!exception) {
      kept.push(m);
      continue;
    }
    const times = evs.map((e) => epochMillisOf(e.time) ?? Number.NaN).filter(Number.isFinite);
    excepted.push({
      exceptionId: exception.id,
      ruleId: m.ruleId,
      eventIds: m.eventIds.slice(0, EXCEPTED_IDS_KEPT),
      time: isoOfMs(Math.max(...times), now),
    });
  }
  return excepted.length > 0 ? { matches: kept, excepted: { matches: excepted } } : { matches };
}
