import { exhaustive } from '../events/read.js';
import type { EventData } from '../events/union.js';
import { instanceProjection } from './types.js';

/** The retention policy as recorded. */
export type RecordedPolicy = EventData<'RetentionPolicyRecorded'>;
/** One archive a cut wrote. */
export type ArchivedSegment = EventData<'LogSegmentsExpired'>['archives'][number];

/** What the log says of retention: the policy last recorded and every archive written. */
export interface RetentionState {
  policy: RecordedPolicy | undefined;
  /** In log order (a cut record carried forward folds as the original it is). */
  archives: ArchivedSegment[];
  /** The first seq in the live store after the last cut (1 before any). */
  firstSeq: number;
  /** Alert evidence that went into an archive: event id -> archive file. */
  archivedEvidence: Map<string, string>;
}

/** Name of the retention projection. */
export const RETENTION = 'retention';

/** Folds the retention policy in force and the archives the cuts wrote. */
export const retentionProjection = instanceProjection({
  name: RETENTION,
  version: 1,
  folds: ['RetentionPolicyRecorded', 'LogSegmentsExpired'],
  initial: (): RetentionState => ({ policy: undefined, archives: [], firstSeq: 1, archivedEvidence: new Map() }),
  evolve(s, record) {
    switch (record.type) {
      case 'RetentionPolicyRecorded':
        s.policy = record.data;
        return s;
      case 'LogSegmentsExpired':
        s.archives.push(...record.data.archives);
        for (const a of record.data.archives)
          for (const { eventIds } of a.alertEvidence ?? [])
            for (const id of eventIds) s.archivedEvidence.set(id, a.file);
        s.firstSeq = Math.max(s.firstSeq, record.data.firstSeq);
        return s;
      default:
        return exhaustive(record, s);
    }
  },
  snapshot: (s) => ({
    policy: s.policy ?? null,
    archives: s.archives,
    firstSeq: s.firstSeq,
    archivedEvidence: [...s.archivedEvidence],
  }),
  restore: (data) => {
    const d = data as {
      policy: RecordedPolicy | null;
      archives: ArchivedSegment[];
      firstSeq: number;
      archivedEvidence: Array<[string, string]>;
    };
    return {
      policy: d.policy ?? undefined,
      archives: d.archives,
      firstSeq: d.firstSeq,
      archivedEvidence: new Map(d.archivedEvidence),
    };
  },
});

/** The archive that holds record `seq`, when a cut removed it from the live store. */
export function archiveOf(s: RetentionState, seq: number): ArchivedSegment | undefined {
  return s.archives.find((a) => a.fromSeq <= seq && seq <= a.toSeq);
}
