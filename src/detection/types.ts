import type { NormalizedEvent } from '../events/normalized-event.js';
import type { Trigger } from './prefilter.js';

/** Sigma rule levels (spec "level"). */
export const LEVELS = ['informational', 'low', 'medium', 'high', 'critical'] as const;

/** One Sigma rule level. */
export type Level = (typeof LEVELS)[number];

/** Metadata shared by detection and correlation rules; `author` is carried to alerts (DRL 1.1 credit). */
export interface RuleMeta {
  /** The rule's `id`, or `sigma-<hash of the document>` when it has none. */
  readonly id: string;
  readonly name?: string;
  readonly title: string;
  readonly author?: string;
  readonly description?: string;
  readonly level: Level;
  /** 0..10, from the level (docs/detections.md, "Rule metadata"). */
  readonly severity: number;
  readonly tags: string[];
  readonly status?: string;
  readonly references: string[];
  readonly falsepositives: string[];
  /** The document's own `suppress:` key, read and checked (suppression.ts). */
  readonly suppress?: Suppression;
}

/**
 * A rule's alert suppression (docs/detections.md "Suppression"): within `for` (`forMs` in milliseconds) of
 * the match that raised an alert, matches with the same values of the `by` fields grow that alert.
 */
export interface Suppression {
  readonly by: string[];
  readonly for: string;
  readonly forMs: number;
}

/** Why a detection rule matched: the selections that held, the field values they saw, the keywords found. */
export interface MatchDetail {
  readonly selections: string[];
  readonly fields: Array<{ selection: string; field: string; modifiers: string[]; value: unknown }>;
  readonly keywords: string[];
}

/** The Sigma logsource of a rule, as written. */
export interface Logsource {
  readonly product?: string;
  readonly category?: string;
  readonly service?: string;
}

/** A compiled single-event detection rule. */
export interface CompiledRule extends RuleMeta {
  readonly kind: 'detection';
  readonly logsource: Logsource;
  /** The rule is tried only on events sharing one of these keys (see `indexKeysForEvent`). */
  readonly indexKeys: string[];
  /** Sigma field names the rule references (for the detection plan). */
  readonly fields: string[];
  /** The prefilter's triggers (prefilter.ts): the rule can only match when one holds; absent: always tried. */
  readonly triggers?: readonly Trigger[];
  /**
   * Set when a regular expression of the rule needs V8's backtracking engine (a lookaround or a
   * back-reference), whose cost on one value has no bound: the instance runs such a rule off the
   * request thread under a deadline (src/commands/alerting/isolated-rules.ts).
   */
  readonly backtracks?: true;
  /** Set when no Vigil normalizer produces the rule's logsource: why (the rule has no index keys and never runs). */
  readonly unmapped?: string;
  /** Evaluates the rule on one event: the explanation when it matches, otherwise undefined. */
  match(event: NormalizedEvent): MatchDetail | undefined;
}

/** The count condition of a correlation: every bound given must hold. */
export interface CountCondition {
  readonly gt?: number;
  readonly gte?: number;
  readonly lt?: number;
  readonly lte?: number;
  readonly eq?: number;
  readonly neq?: number;
}

/** The correlation types Vigil evaluates. */
export const CORRELATION_TYPES = ['event_count', 'value_count', 'temporal', 'temporal_ordered'] as const;

/** One correlation type. */
export type CorrelationType = (typeof CORRELATION_TYPES)[number];

/** A compiled Sigma correlation rule. */
export interface CompiledCorrelation extends RuleMeta {
  readonly kind: 'correlation';
  readonly type: CorrelationType;
  /** Referenced rules, by id or name, in the order written (the order matters for temporal_ordered). */
  readonly rules: string[];
  readonly groupBy: string[];
  readonly timespanMs: number;
  /** For temporal types without a condition: all referenced rules (`{ gte: rules.length }`). */
  readonly condition: CountCondition;
  /** value_count: the field whose distinct values are counted. */
  readonly field?: string;
  /** alias -> (rule id or name -> field name in that rule's events). */
  readonly aliases: Record<string, Record<string, string>>;
  /** Whether the referenced rules also raise their own matches. */
  readonly generate: boolean;
}

/** Either kind of compiled rule. */
export type CompiledSigma = CompiledRule | CompiledCorrelation;

/** A result that is a value or a human-readable reason. */
export type Result<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** Builds a success. */
export function ok<T>(value: T): Result<T> {
  return { ok: true, value };
}

/** Builds a failure. */
export function fail<T>(error: string): Result<T> {
  return { ok: false, error };
}
