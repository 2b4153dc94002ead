import type { MatchDetail } from '../detection/types.js';

/** Where rules come from: the built-in pack or an import through the API. */
export type RuleSource = 'builtin' | 'api';

/** Sigma rules imported (the full text, and each document as parsed), replacing rules with the same id. */
export interface RulesImported {
  readonly source: RuleSource;
  readonly packVersion?: string;
  readonly text: string;
  readonly rules: ReadonlyArray<{ readonly id: string; readonly doc: unknown }>;
}

/** A rule switched on or off. */
export interface RuleEnabledChanged {
  readonly ruleId: string;
  readonly enabled: boolean;
  readonly reason?: string;
}

/** A rule hit offered to correlations: rule, event, event time and the fields correlations read. */
export interface RecordedHit {
  readonly r: string;
  readonly n?: string;
  readonly e: string;
  readonly t: number;
  readonly v: Readonly<Record<string, unknown>>;
}

/** Detection hits of one evaluation, so replay advances correlation windows without re-running rules. */
export interface DetectionHits {
  readonly hits: readonly RecordedHit[];
}

/** A reference to one piece of evidence of an alert; raw records stay local. */
export interface EvidenceRef {
  readonly eventId: string;
  readonly time: string;
  readonly summary: string;
}

/** Why a correlation fired. */
export interface CorrelationReason {
  readonly correlation: string;
  readonly groupBy: Readonly<Record<string, unknown>>;
  readonly value: number;
  readonly condition: Readonly<Record<string, number>>;
  readonly field?: string;
  readonly rules: readonly string[];
  readonly timespan: string;
}

/** A new alert, with everything its detail shows at the time it was raised. */
export interface AlertRaised {
  readonly alertId: string;
  readonly ruleId: string;
  readonly groupKey: string;
  readonly title: string;
  readonly author?: string;
  readonly level: string;
  readonly severity: number;
  readonly confidence: number;
  readonly matchReason: MatchDetail | CorrelationReason;
  readonly evidence: readonly EvidenceRef[];
  readonly affectedSystems: readonly string[];
  readonly firstSeen: string;
  readonly lastSeen: string;
  readonly tags: readonly string[];
}

/** Later matches of an open alert's rule and group key, added to it instead of a new alert. */
export interface AlertEvidenceAdded {
  readonly alertId: string;
  readonly evidence: readonly EvidenceRef[];
  readonly affectedSystems: readonly string[];
  readonly lastSeen: string;
  readonly confidence: number;
}

/** An analyst set an alert's status, with a reason; principal and authentication come from the request. */
export interface AlertReviewed {
  readonly alertId: string;
  readonly from: string;
  readonly to: string;
  readonly reason: string;
  readonly principal: string;
  readonly authentication: string;
}

/** An incident opened, automatically (alerts sharing affected systems) or by an analyst. */
export interface IncidentOpened {
  readonly incidentId: string;
  readonly title: string;
  readonly origin: 'correlated' | 'promoted';
  readonly reason: string;
  readonly alertIds: readonly string[];
  readonly principal?: string;
}

/** Alerts joined an existing incident. */
export interface IncidentAlertsAdded {
  readonly incidentId: string;
  readonly alertIds: readonly string[];
  readonly reason: string;
}

/** Record type names of detections. A written name is never renamed or reshaped. */
export const DetectionRecord = {
  RulesImported: 'RulesImported',
  RuleEnabledChanged: 'RuleEnabledChanged',
  DetectionHits: 'DetectionHits',
  AlertRaised: 'AlertRaised',
  AlertEvidenceAdded: 'AlertEvidenceAdded',
  AlertReviewed: 'AlertReviewed',
  IncidentOpened: 'IncidentOpened',
  IncidentAlertsAdded: 'IncidentAlertsAdded',
} as const;
