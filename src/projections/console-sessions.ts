import { exhaustive } from '../events/read.js';
import { instanceProjection } from './types.js';

/** One open console session: whose, until when, and since when. */
export interface ConsoleSession {
  principal: string;
  authentication: string;
  startedAt: string;
  expiresAt: string;
  idleMinutes: number;
  sourceAddress: string;
}

/** Open console sessions by the SHA-256 of their secret (a plain object, so it checkpoints as it is). */
export interface ConsoleSessions {
  byHash: Record<string, ConsoleSession>;
}

/**
 * The console's sessions: started ones until they end. A session past its absolute end is dropped
 * when a later session starts (at that record's time), so the model stays as small as the number
 * of sessions that could still be used.
 */
export const consoleSessionsProjection = instanceProjection<ConsoleSessions>({
  name: 'console-sessions',
  version: 1,
  initial: () => ({ byHash: {} }),
  evolve(s, record) {
    switch (record.type) {
      case 'ConsoleSessionStarted': {
        for (const [hash, session] of Object.entries(s.byHash)) if (session.expiresAt <= record.at) delete s.byHash[hash];
        const d = record.data;
        s.byHash[d.sessionHash] = { principal: d.principal, authentication: d.authentication, startedAt: record.at, expiresAt: d.expiresAt, idleMinutes: d.idleMinutes, sourceAddress: d.sourceAddress };
        return s;
      }
      case 'ConsoleSessionEnded':
        delete s.byHash[record.data.sessionHash];
        return s;
      // Nothing else changes this model.
      case 'EventsIngested': case 'RawRecordsIngested':
      case 'AccessRecorded': case 'ApiRequestAudited': case 'RequestsRefused':
      case 'CollectorEnrollmentTokenIssued': case 'CollectorEnrolled': case 'CollectorEnrollmentRejected': case 'CollectorSubmissionAccepted': case 'CollectorSubmissionRejected':
      case 'RulesImported': case 'RuleEnabledChanged': case 'DetectionHitsRecorded':
      case 'AlertRaised': case 'AlertEvidenceAdded': case 'AlertReviewed': case 'AlertAssigned': case 'AlertNoteAdded': case 'AlertsBulkReviewed':
      case 'IncidentOpened': case 'IncidentAlertsAdded': case 'IncidentStatusChanged': case 'IncidentAssigned': case 'IncidentMerged':
      case 'ExportConfigurationRecorded': case 'ExportDestinationStateChanged': case 'ExportCursorRecorded':
      case 'SourceWentSilent': case 'SourceResumed': case 'DiskWatermarkCrossed': case 'CredentialsChanged':
      case 'RetentionPolicyRecorded': case 'RecordsCarriedForward': case 'LogSegmentsExpired':
        return s;
      default:
        return exhaustive(record, s);
    }
  },
});
