import { exhaustive } from '../events/read.js';
import { compileSigma } from '../detection/compile.js';
import { initialCorrelationState, type CorrelationState, type RuleHit } from '../detection/correlate.js';
import { createRuleSet, type RuleSet } from '../detection/engine.js';
import type { CompiledSigma, Suppression } from '../detection/types.js';
import type {
  DetectionHitsRecorded,
  RuleQuarantined,
  RuleSource,
  RuleSuppressionSet,
} from '../events/detection-records.js';
import type { NormalizedEvent } from '../events/normalized-event.js';
import type { InstanceRecord } from '../events/union.js';
import { instanceProjection } from './types.js';

/** One installed rule: its parsed document, compiled form and switches. */
export interface InstalledRule {
  readonly id: string;
  readonly doc: unknown;
  readonly compiled: CompiledSigma;
  readonly source: RuleSource;
  readonly importedAt: string;
  readonly importedBy?: string;
  enabled: boolean;
  /** Set while the rule is quarantined (over its time budget at run time): it does not evaluate. */
  quarantine?: RuleQuarantine;
  /** A suppression set through the API (`RuleSuppressionSet`): it overrides the document's own `suppress:`. */
  suppressOverride?: SuppressionSetting;
}

/** A suppression set through the API, with who set it, when and why. */
export interface SuppressionSetting extends Suppression {
  readonly reason: string;
  readonly principal: string;
  readonly at: string;
}

/** A rule's suppression in effect, and where it comes from: the API's setting or the rule document. */
export type EffectiveSuppression = Suppression &
  ({ readonly source: 'rule' } | ({ source: 'api' } & SuppressionSetting));

/** The suppression in effect for a rule: the API's setting, else its document's own `suppress:`, else none. */
export function effectiveSuppression(rule: InstalledRule): EffectiveSuppression | undefined {
  if (rule.suppressOverride) return { source: 'api', ...rule.suppressOverride };
  const own = rule.compiled.suppress;
  return own ? { source: 'rule', by: own.by, for: own.for, forMs: own.forMs } : undefined;
}

function setSuppression(s: DetectionState, d: RuleSuppressionSet, at: string): void {
  const rule = s.rules.get(d.ruleId);
  if (!rule) return;
  if (d.suppress)
    rule.suppressOverride = {
      by: [...d.suppress.by],
      for: d.suppress.for,
      forMs: d.suppress.forMs,
      reason: d.reason,
      principal: d.principal,
      at,
    };
  else delete rule.suppressOverride;
}

/** Why and when a rule was quarantined, as `RuleQuarantined` recorded it. */
export interface RuleQuarantine extends Omit<RuleQuarantined, 'ruleId'> {
  readonly at: string;
}

/** Rules and correlation windows: the detection read model. `ruleSet` is derived, rebuilt when rules change. */
export interface DetectionState {
  rules: Map<string, InstalledRule>;
  correlation: CorrelationState;
  builtinPack?: string;
  ruleSet?: RuleSet;
}

/**
 * The rule set of the enabled rules that are not quarantined (cached until the rules change), with
 * the rules whose cost has no bound set aside for the detector to run off the request thread.
 */
export function activeRuleSet(s: DetectionState): RuleSet {
  s.ruleSet ??= createRuleSet(
    [...s.rules.values()].filter((r) => r.enabled && r.quarantine === undefined).map((r) => r.compiled),
    { isolate: true },
  );
  return s.ruleSet;
}

/** Hits as recorded, turned back into correlation input: the recorded fields stand in for the event. */
export function hitsFromRecord(data: DetectionHitsRecorded): RuleHit[] {
  return data.hits.map((h) => ({
    ruleId: h.ruleId,
    eventId: h.eventId,
    timeMs: h.timeMs,
    ...(h.ruleName !== undefined ? { ruleName: h.ruleName } : {}),
    event: { attributes: h.values } as unknown as NormalizedEvent,
  }));
}

function importRules(s: DetectionState, record: Extract<InstanceRecord, { type: 'RulesImported' }>): void {
  const data = record.data;
  for (const r of data.rules) {
    const compiled = compileSigma(r.doc);
    // Imports are validated before they are recorded; a rule this version cannot compile stays out.
    if (!compiled.ok) continue;
    const prior = s.rules.get(r.id);
    s.rules.set(r.id, {
      id: r.id,
      doc: r.doc,
      compiled: compiled.rule,
      source: data.source,
      importedAt: record.at,
      ...(record.actor ? { importedBy: record.actor.id } : {}),
      enabled: prior?.enabled ?? true,
      // A new version of a quarantined rule stays quarantined: only enabling it lifts that.
      ...(prior?.quarantine ? { quarantine: prior.quarantine } : {}),
      // The API's suppression is the analyst's, set for a rule imported as-is: a new version keeps it.
      ...(prior?.suppressOverride ? { suppressOverride: prior.suppressOverride } : {}),
    });
  }
  if (data.source === 'builtin' && data.packVersion) s.builtinPack = data.packVersion;
  s.ruleSet = undefined;
}

/**
 * The detection read model: installed rules (compiled once per change) and the correlation
 * windows, advanced by the recorded hits so replay gives the same windows without re-running rules.
 */
export const detectionProjection = instanceProjection({
  name: 'detection',
  // 3: a rule's suppression set through the API (RuleSuppressionSet).
  version: 3,
  folds: ['RulesImported', 'RuleEnabledChanged', 'RuleQuarantined', 'RuleSuppressionSet', 'DetectionHitsRecorded'],
  initial: (): DetectionState => ({ rules: new Map(), correlation: initialCorrelationState() }),
  evolve(s, record) {
    switch (record.type) {
      case 'RulesImported':
        importRules(s, record);
        return s;
      case 'RuleEnabledChanged': {
        const d = record.data;
        const rule = s.rules.get(d.ruleId);
        if (rule) {
          rule.enabled = d.enabled;
          // Enabling is the explicit, audited act that lifts a quarantine; disabling keeps its record.
          if (d.enabled) delete rule.quarantine;
          s.ruleSet = undefined;
        }
        return s;
      }
      case 'RuleQuarantined': {
        const { ruleId, ...why } = record.data;
        const rule = s.rules.get(ruleId);
        if (rule) {
          rule.quarantine = { ...why, at: record.at };
          s.ruleSet = undefined;
        }
        return s;
      }
      case 'RuleSuppressionSet':
        setSuppression(s, record.data, record.at);
        return s;
      case 'DetectionHitsRecorded':
        s.correlation = activeRuleSet(s).correlate(s.correlation, hitsFromRecord(record.data)).state;
        return s;
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({
    rules: [...s.rules.values()].map(({ compiled: _c, ...r }) => r),
    correlation: s.correlation,
    ...(s.builtinPack ? { builtinPack: s.builtinPack } : {}),
  }),
  restore(data) {
    const d = data as {
      rules: Array<Omit<InstalledRule, 'compiled'>>;
      correlation: CorrelationState;
      builtinPack?: string;
    };
    const rules = new Map<string, InstalledRule>();
    for (const r of d.rules) {
      const compiled = compileSigma(r.doc);
      if (compiled.ok) rules.set(r.id, { ...r, compiled: compiled.rule });
    }
    return { rules, correlation: d.correlation, ...(d.builtinPack ? { builtinPack: d.builtinPack } : {}) };
  },
});
