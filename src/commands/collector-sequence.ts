/** The verdict on a submission's sequence against the last accepted one of its collector and epoch. */
export type SequenceVerdict = 'next' | 'retry' | 'equivocation' | 'replay' | 'gap';

/**
 * Kafka-style idempotent-producer rules: `last + 1` is next; `last` with the same digest is an
 * idempotent retry, with another digest equivocation (the key signed two things for one number);
 * below `last` a replay; above `last + 1` a gap. `last` is 0 before the first submission.
 */
export function sequenceVerdict(
  last: number,
  lastDigest: string | null,
  sequence: number,
  digest: string,
): SequenceVerdict {
  if (sequence === last + 1) return 'next';
  if (sequence === last && last > 0) return digest === lastDigest ? 'retry' : 'equivocation';
  return sequence < last ? 'replay' : 'gap';
}
