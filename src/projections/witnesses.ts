import { instanceProjection } from './types.js';

/** The last refusal recorded of one witness: the checkpoint size it refused and the alert raised. */
export interface WitnessRefusal {
  readonly size: number;
  readonly alertId: string;
}

/** What the log says of the witnesses the instance pushes to: each one's last recorded refusal. */
export interface WitnessesState {
  refusals: Map<string, WitnessRefusal>;
}

/** Name of the witnesses projection. */
export const WITNESSES = 'witnesses';

/** Folds the refusals of witnesses, so a refusal is recorded (and alerted) once, not at every push (docs/log.md). */
export const witnessesProjection = instanceProjection({
  name: WITNESSES,
  version: 1,
  folds: ['WitnessRefused'],
  initial: (): WitnessesState => ({ refusals: new Map() }),
  // One folded type: every record given here is a WitnessRefused.
  evolve(s, record) {
    s.refusals.set(record.data.witness, { size: record.data.size, alertId: record.data.alertId });
    return s;
  },
  snapshot: (s) => ({ refusals: [...s.refusals] }),
  restore: (data) => ({ refusals: new Map((data as { refusals: Array<[string, WitnessRefusal]> }).refusals) }),
});
