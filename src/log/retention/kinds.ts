import type { InstanceEventType } from '../../events/union.js';
import type { RetentionSettings } from './settings.js';

/** The kinds of record a retention policy names; `kept` records never expire. */
export type RecordKind = 'evidence' | 'alerts' | 'reviews' | 'incidents' | 'access' | 'audit' | 'kept';

/** Days each expiring kind is kept (null: for ever). */
export type RetentionDays = Readonly<Record<Exclude<RecordKind, 'kept'>, number | null>>;

/** The kind of every instance record type: a new type must say how long it lives. */
const KIND_OF: Readonly<Record<InstanceEventType | 'DetectionHits', RecordKind>> = {
  EventsIngested: 'evidence',
  RawRecordsIngested: 'evidence',
  CollectorSubmissionAccepted: 'evidence',
  DetectionHits: 'evidence',
  DetectionHitsRecorded: 'evidence',
  AlertRaised: 'alerts',
  AlertEvidenceAdded: 'alerts',
  AlertReviewed: 'reviews',
  AlertAssigned: 'reviews',
  AlertNoteAdded: 'reviews',
  AlertsBulkReviewed: 'reviews',
  IncidentOpened: 'incidents',
  IncidentAlertsAdded: 'incidents',
  IncidentStatusChanged: 'incidents',
  IncidentAssigned: 'incidents',
  IncidentMerged: 'incidents',
  AccessRecorded: 'access',
  RequestsRefused: 'access',
  CollectorSubmissionRejected: 'access',
  CollectorEnrollmentRejected: 'access',
  ApiRequestAudited: 'audit',
  CredentialsChanged: 'audit',
  ConsoleSessionStarted: 'audit',
  ConsoleSessionEnded: 'audit',
  // Setup, collectors, rules, configuration and monitoring state: what the service needs to run.
  CollectorEnrollmentTokenIssued: 'kept',
  CollectorEnrolled: 'kept',
  RulesImported: 'kept',
  RuleEnabledChanged: 'kept',
  RuleQuarantined: 'kept',
  RuleSuppressionSet: 'kept',
  ExportConfigurationRecorded: 'kept',
  ExportDestinationStateChanged: 'kept',
  ExportCursorRecorded: 'kept',
  SourceWentSilent: 'kept',
  SourceResumed: 'kept',
  DiskWatermarkCrossed: 'kept',
  WitnessRefused: 'kept',
  RetentionPolicyRecorded: 'kept',
  LogSegmentsExpired: 'kept',
  SignedHeadsRewound: 'kept',
  LogTailQuarantined: 'kept',
  LogKeyRotated: 'kept',
  // Exceptions are configuration an analyst answers for; what they kept from alerting goes with the evidence.
  ExceptionCreated: 'kept',
  ExceptionChanged: 'kept',
  ExceptionRevoked: 'kept',
  ExceptionExpired: 'kept',
  ExceptionExpiryReminded: 'kept',
  MatchesExcepted: 'evidence',
  // Threat intelligence: the indicators active at any time must replay; a feed's state is configuration.
  IntelIndicatorsChanged: 'kept',
  IntelFeedUpdated: 'kept',
  // A hunt is an analyst's read of the evidence: audited as the requests are.
  HuntSearched: 'audit',
  // Its records are judged one by one (plan.ts); the wrapper itself is never carried.
  RecordsCarriedForward: 'evidence',
};

/** The kind of a record type; a type this version does not know is kept. */
export function kindOf(type: string): RecordKind {
  return (KIND_OF as Record<string, RecordKind>)[type] ?? 'kept';
}

/** The days of each kind under the settings. */
export function retentionDays(s: RetentionSettings): RetentionDays {
  return {
    evidence: s.evidenceDays,
    alerts: s.alertsDays,
    reviews: s.reviewsDays,
    incidents: s.incidentsDays,
    access: s.accessDays,
    audit: s.auditDays,
  };
}

/**
 * The shortest finite retention: a segment whose newest record is older than it expires (undefined: nothing ever does).
 */
export function shortestDays(days: RetentionDays): number | undefined {
  const finite = Object.values(days).filter((d): d is number => d !== null);
  return finite.length === 0 ? undefined : Math.min(...finite);
}
