import { sealEnvelope } from '../../events/collector-protocol/open-envelope.js';
import type { AgentKey } from './keys.js';
import type { Spool, SpoolEntry } from './spool.js';

/** An entry with a new sequence, signed again. */
export function resign(entry: SpoolEntry, sequence: number, key: AgentKey): SpoolEntry {
  const payload = { ...entry.envelope.payload, sequence };
  return { ...entry, sequence, envelope: sealEnvelope(payload, key.seed) };
}

/**
 * Renumbers every spooled entry from `first` on (resynchronisation after a 409, or a new epoch),
 * signing each again. Files are rewritten in an order that never overwrites an entry not yet
 * copied, so a crash midway can leave a duplicate entry (its events are deduplicated by id on the
 * server) but never loses one.
 */
export function resequence(spool: Spool, first: number, key: AgentKey): void {
  const old = spool.sequences();
  const entries = old.map((s) => spool.read(s));
  const moves = entries.map((e, i) => ({ from: e, to: first + i }));
  // Moving up, write from the end; moving down, from the start.
  const ordered = first > old[0]! ? [...moves].reverse() : moves;
  for (const m of ordered) spool.append(resign(m.from, m.to, key));
  // Only now: a lower acknowledged sequence first would let recovery drop entries not yet copied.
  spool.setLastAcked(first - 1);
  const kept = new Set(moves.map((m) => m.to));
  for (const s of old) if (!kept.has(s)) spool.remove(s);
}
