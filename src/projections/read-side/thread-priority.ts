import { getPriority, setPriority } from 'node:os';

/**
 * Lowers the calling thread's scheduling priority by `by` nice steps (at most to 19). Linux keeps a
 * nice value per thread, and `setPriority(0, …)` is this thread's alone (elsewhere it would be the
 * whole process's, so it is left as it is). Lowering needs no privilege; it is a preference for the
 * scheduler when the CPU is short, and where it cannot be had the thread runs as it is.
 */
export function lowerThreadPriority(by: number): void {
  if (by <= 0 || process.platform !== 'linux') return;
  try {
    setPriority(0, Math.min(19, getPriority(0) + by));
  } catch {
    // left as it is
  }
}
