import type { REFUSAL_REASONS } from './access-events.js';
import type { NormalizedEvent } from './normalized-event.js';
import { asStoredInstanceEvent } from './read.js';
import type { EventData, InstanceEventType, StoredInstanceEvent } from './union.js';

/** Normalized events accepted through `POST /api/v1/events` (duplicates already removed). */
export type EventsIngested = EventData<'EventsIngested'>;
/** Raw records accepted through `POST /api/v1/ingest/{normalizer}`, kept with what they became. */
export type RawRecordsIngested = EventData<'RawRecordsIngested'>;
/** The normalized access event of one authenticated (or failed) `/api/v1` request. */
export type AccessRecorded = EventData<'AccessRecorded'>;
/** The API audit record of one `/api/v1` request: who, how, what, outcome. Never a token or a body. */
export type ApiRequestAudited = EventData<'ApiRequestAudited'>;
/** Requests from one source address refused for one reason within one interval (access-events.ts). */
export type RequestsRefused = EventData<'RequestsRefused'>;
/** Credentials of the registry file created, disabled, enabled, edited or removed (credential-events.ts). */
export type CredentialsChanged = EventData<'CredentialsChanged'>;
/** Why requests were refused before reaching a handler. */
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Record type names of evidence, access and collectors. A written name is never renamed or reshaped. */
export const RecordType = {
  EventsIngested: 'EventsIngested',
  RawRecordsIngested: 'RawRecordsIngested',
  AccessRecorded: 'AccessRecorded',
  ApiRequestAudited: 'ApiRequestAudited',
  CollectorEnrollmentTokenIssued: 'CollectorEnrollmentTokenIssued',
  CollectorEnrolled: 'CollectorEnrolled',
  CollectorEnrollmentRejected: 'CollectorEnrollmentRejected',
  CollectorSubmissionAccepted: 'CollectorSubmissionAccepted',
  CollectorSubmissionRejected: 'CollectorSubmissionRejected',
  RequestsRefused: 'RequestsRefused',
  CredentialsChanged: 'CredentialsChanged',
} as const satisfies { readonly [K in InstanceEventType]?: K };

/**
 * The instance event types whose records carry NormalizedEvents (those `eventsCarried` below
 * returns events for): what the folds over evidence fold.
 * tests/projections/folds.test.ts checks the two agree.
 */
export const CARRYING_EVENT_TYPES = [
  'EventsIngested',
  'RawRecordsIngested',
  'CollectorSubmissionAccepted',
  'CredentialsChanged',
  'AccessRecorded',
  'RequestsRefused',
  'CollectorSubmissionRejected',
  'CollectorEnrollmentRejected',
  'ExportDestinationStateChanged',
] as const satisfies readonly InstanceEventType[];

const NONE: readonly NormalizedEvent[] = [];

/** The NormalizedEvents an instance event carries: every type states whether it carries evidence. */
export function eventsCarried(e: StoredInstanceEvent): readonly NormalizedEvent[] {
  switch (e.type) {
    case 'EventsIngested':
    case 'RawRecordsIngested':
    case 'CollectorSubmissionAccepted':
    case 'CredentialsChanged':
      return e.data.events;
    case 'AccessRecorded':
    case 'RequestsRefused':
    case 'CollectorSubmissionRejected':
    case 'CollectorEnrollmentRejected':
    case 'ExportDestinationStateChanged':
      return [e.data.event];
    case 'ApiRequestAudited':
    case 'CollectorEnrollmentTokenIssued':
    case 'CollectorEnrolled':
    case 'RulesImported':
    case 'RuleEnabledChanged':
    case 'RuleQuarantined':
    case 'RuleSuppressionSet':
    case 'DetectionHits':
    case 'DetectionHitsRecorded':
    case 'AlertRaised':
    case 'AlertEvidenceAdded':
    case 'AlertReviewed':
    case 'AlertAssigned':
    case 'AlertNoteAdded':
    case 'AlertsBulkReviewed':
    case 'IncidentOpened':
    case 'IncidentAlertsAdded':
    case 'ConsoleSessionStarted':
    case 'ConsoleSessionEnded':
    case 'IncidentStatusChanged':
    case 'IncidentAssigned':
    case 'IncidentMerged':
    case 'ExportConfigurationRecorded':
    case 'ExportCursorRecorded':
    case 'SourceWentSilent':
    case 'SourceResumed':
    case 'DiskWatermarkCrossed':
    case 'WitnessRefused':
    case 'RetentionPolicyRecorded':
    case 'RecordsCarriedForward':
    case 'LogSegmentsExpired':
    case 'SignedHeadsRewound':
    case 'LogTailQuarantined':
    case 'LogKeyRotated':
    case 'ExceptionCreated':
    case 'ExceptionChanged':
    case 'ExceptionRevoked':
    case 'ExceptionExpired':
    case 'ExceptionExpiryReminded':
    case 'MatchesExcepted':
    case 'IntelIndicatorsChanged':
    case 'IntelFeedUpdated':
    case 'HuntSearched':
      return NONE;
    default: {
      const _exhaustive: never = e;
      return _exhaustive;
    }
  }
}

/** The NormalizedEvents a decided event or a decoded record carries (none for a type this version does not know). */
export function eventsOfRecord(e: { readonly type: string; readonly data: unknown }): readonly NormalizedEvent[] {
  const known = asStoredInstanceEvent(e);
  return known === undefined ? NONE : eventsCarried(known);
}

/** The NormalizedEvents of a record's type and data (ingested, raw-normalized, submitted or access events). */
export function eventsOf(type: string, data: unknown): readonly NormalizedEvent[] {
  return eventsOfRecord({ type, data });
}
