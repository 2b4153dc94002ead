/**
 * The installer's phases, in order. Progress is monotonic: a report may repeat the current phase
 * (idempotent) or move to any later one, never back. `completed` needs the first snapshot.
 */
export const PHASES = [
  'discovery_completed',
  'central_install_started',
  'central_instance_configured',
  'collectors_provisioned',
  'awaiting_first_snapshot',
  'completed',
] as const;

/** One phase name. */
export type Phase = (typeof PHASES)[number];

/** The position of a phase in the order (0-based), or -1 for an unknown name. */
export function phaseIndex(phase: string): number {
  return (PHASES as readonly string[]).indexOf(phase);
}
