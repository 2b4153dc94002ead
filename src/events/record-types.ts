import type { NormalizedEvent } from './normalized-event.js';

/** Normalized events accepted through `POST /api/v1/events` (duplicates already removed). */
export interface EventsIngested {
  readonly events: readonly NormalizedEvent[];
}

/** Raw records accepted through `POST /api/v1/ingest/{normalizer}`, kept with what they became. */
export interface RawRecordsIngested {
  readonly normalizer: string;
  readonly logType?: string;
  readonly meshnet?: string;
  /** The original records, as received: raw evidence stays local, in the log. */
  readonly records: readonly unknown[];
  /** The events they normalized to (duplicates of already stored events removed). */
  readonly events: readonly NormalizedEvent[];
}

/** The normalized access event of one authenticated (or failed) `/api/v1` request. */
export interface AccessRecorded {
  readonly event: NormalizedEvent;
}

/** The API audit record of one `/api/v1` request: who, how, what, outcome. Never a token or a body. */
export interface ApiRequestAudited {
  readonly requestId: string;
  readonly principal: string | null;
  readonly authentication: string;
  readonly method: string;
  readonly route: string;
  readonly status: number;
  readonly durationMs: number;
  readonly sourceAddress: string;
}

/** Why requests were refused before reaching a handler. */
export type RefusalReason = 'authentication_failed' | 'throttled' | 'overloaded';

/**
 * Requests from one source address refused for one reason within one interval, counted instead of
 * logged one by one (failed authentications, throttled addresses, ingest past the queue bound), so
 * a flood cannot fill the disk. The first failed authentication of an interval is also logged in
 * full (AccessRecorded + ApiRequestAudited); `count` includes it.
 */
export interface RequestsRefused {
  /** The detectable access summary: category identity, class api_access, activity requests_refused. */
  readonly event: NormalizedEvent;
  readonly reason: RefusalReason;
  readonly status: number;
  readonly sourceAddress: string;
  readonly count: number;
  readonly firstAt: string;
  readonly lastAt: string;
  /** Up to ten routes the requests were for. */
  readonly routes: readonly string[];
}

/** Record type names written by the instance. A written name is never renamed or reshaped. */
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
} as const;

/** The NormalizedEvents a record carries (ingested, raw-normalized or access events). */
export function eventsOf(type: string, data: unknown): readonly NormalizedEvent[] {
  switch (type) {
    case RecordType.EventsIngested:
    case RecordType.RawRecordsIngested:
    case RecordType.CollectorSubmissionAccepted:
      return (data as EventsIngested).events;
    case RecordType.AccessRecorded:
    case RecordType.RequestsRefused:
    case RecordType.CollectorSubmissionRejected:
    case RecordType.CollectorEnrollmentRejected:
      return [(data as AccessRecorded).event];
    default:
      return [];
  }
}
