import type * as v from 'valibot';
import type {
  ALERT_DISPOSITIONS,
  ALERT_STATUSES,
  INCIDENT_STATUSES,
  CorrelationReasonSchema,
  IntelReasonSchema,
  EvidenceRefSchema,
  HitSchema,
  RULE_SOURCES,
} from './detection-events.js';
import type { EventData, InstanceEventType } from './union.js';

/** Where rules come from: the built-in pack or an import through the API. */
export type RuleSource = (typeof RULE_SOURCES)[number];
/** One alert review status. */
export type AlertStatus = (typeof ALERT_STATUSES)[number];
/** Sigma rules imported (the full text, and each document as parsed), replacing rules with the same id. */
export type RulesImported = EventData<'RulesImported'>;
/** A rule switched on or off. */
export type RuleEnabledChanged = EventData<'RuleEnabledChanged'>;
/** A rule stopped at run time for going over its time budget. */
export type RuleQuarantined = EventData<'RuleQuarantined'>;
/** A rule's alert suppression set or cleared through the API. */
export type RuleSuppressionSet = EventData<'RuleSuppressionSet'>;
/** The rule hits of one evaluation, so replay advances correlation windows without re-running rules. */
export type DetectionHitsRecorded = EventData<'DetectionHitsRecorded'>;
/** One recorded rule hit: rule, event, event time and the fields correlations read. */
export type RecordedHit = v.InferOutput<typeof HitSchema>;
/** A new alert, with everything its detail shows at the time it was raised. */
export type AlertRaised = EventData<'AlertRaised'>;
/** A reference to one piece of evidence of an alert; raw records stay local. */
export type EvidenceRef = v.InferOutput<typeof EvidenceRefSchema>;
/** Why a correlation fired. */
export type CorrelationReason = v.InferOutput<typeof CorrelationReasonSchema>;
/** Why a threat intelligence alert was raised. */
export type IntelReason = v.InferOutput<typeof IntelReasonSchema>;
/** Later matches of an open alert's rule and group key, added to it instead of a new alert. */
export type AlertEvidenceAdded = EventData<'AlertEvidenceAdded'>;
/** An analyst set an alert's status, with a reason. */
export type AlertReviewed = EventData<'AlertReviewed'>;
/** What an analyst concluded about an alert. */
export type AlertDisposition = (typeof ALERT_DISPOSITIONS)[number];
/** An alert's assignee set or cleared. */
export type AlertAssigned = EventData<'AlertAssigned'>;
/** A note on an alert. */
export type AlertNoteAdded = EventData<'AlertNoteAdded'>;
/** Many alerts reviewed in one action. */
export type AlertsBulkReviewed = EventData<'AlertsBulkReviewed'>;
/** An incident opened, automatically (alerts sharing affected systems) or by an analyst. */
export type IncidentOpened = EventData<'IncidentOpened'>;
/** Alerts joined an existing incident. */
export type IncidentAlertsAdded = EventData<'IncidentAlertsAdded'>;

/** An incident lifecycle status an analyst sets. */
export type IncidentStatus = (typeof INCIDENT_STATUSES)[number];
/** An incident moved through its lifecycle. */
export type IncidentStatusChanged = EventData<'IncidentStatusChanged'>;
/** An incident's assignee set or cleared. */
export type IncidentAssigned = EventData<'IncidentAssigned'>;
/** One incident merged into another. */
export type IncidentMerged = EventData<'IncidentMerged'>;

/** Rule matches an exception kept from alerting. */
export type MatchesExcepted = EventData<'MatchesExcepted'>;

/** Record type names of detections. A written name is never renamed or reshaped. */
export const DetectionRecord = {
  RulesImported: 'RulesImported',
  RuleEnabledChanged: 'RuleEnabledChanged',
  RuleQuarantined: 'RuleQuarantined',
  RuleSuppressionSet: 'RuleSuppressionSet',
  /** Legacy: no longer written, read as DetectionHitsRecorded. */
  DetectionHits: 'DetectionHits',
  DetectionHitsRecorded: 'DetectionHitsRecorded',
  AlertRaised: 'AlertRaised',
  AlertEvidenceAdded: 'AlertEvidenceAdded',
  AlertReviewed: 'AlertReviewed',
  AlertAssigned: 'AlertAssigned',
  AlertNoteAdded: 'AlertNoteAdded',
  AlertsBulkReviewed: 'AlertsBulkReviewed',
  IncidentOpened: 'IncidentOpened',
  IncidentAlertsAdded: 'IncidentAlertsAdded',
  IncidentStatusChanged: 'IncidentStatusChanged',
  IncidentAssigned: 'IncidentAssigned',
  IncidentMerged: 'IncidentMerged',
} as const satisfies { readonly [K in InstanceEventType | 'DetectionHits']?: K };
