import { instanceProjection } from './types.js';

/** One recorded rotation of the log's signing key: the seq of its `LogKeyRotated` record and the note. */
export interface RecordedRotation {
  readonly seq: number;
  readonly note: string;
}

/** The rotations of the log's signing key the log records, in log order. */
export interface KeyRotationsState {
  rotations: RecordedRotation[];
}

/** Name of the key rotations projection. */
export const KEY_ROTATIONS = 'keyRotations';

/**
 * Folds the log's key rotations: what `GET /api/v1/log/key-rotations` answers, and what a start compares
 * the signer's rotations with, so each is recorded once (docs/log.md, "Rotating the signing key").
 */
export const keyRotationsProjection = instanceProjection({
  name: KEY_ROTATIONS,
  version: 1,
  folds: ['LogKeyRotated'],
  initial: (): KeyRotationsState => ({ rotations: [] }),
  // One folded type: every record given here is a LogKeyRotated.
  evolve(s, record) {
    s.rotations.push({ seq: record.seq, note: record.data.note });
    return s;
  },
  snapshot: (s) => ({ rotations: s.rotations }),
  restore: (data) => ({ rotations: [...(data as KeyRotationsState).rotations] }),
});
