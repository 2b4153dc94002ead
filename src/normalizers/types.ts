import type { NormalizedEvent } from '../events/normalized-event.js';

/** What the ingest route knows about a batch, handed to every normalizer call. */
export interface NormalizeContext {
  /** When Vigil received the batch (ISO 8601, from the command context, never the clock). */
  readonly ingestedAt: string;
  /** The `logType` query parameter, already checked against the normalizer's `logTypes`. */
  readonly logType?: string;
  /** The `meshnet` query parameter (mesh-vpn-logs only). */
  readonly meshnet?: string;
  /** The optional `context` object of a `{records, context}` body. */
  readonly context?: Readonly<Record<string, unknown>>;
}

/** A normalizer's answer for one raw record: events, or why the record is refused. */
export type NormalizeResult =
  { readonly ok: true; readonly events: NormalizedEvent[] } | { readonly ok: false; readonly error: string };

/**
 * Wraps a normalizer's body so it answers instead of throwing: hashing a record recurses through
 * it, and a pathologically deep record can exhaust the stack.
 */
export function answering(
  normalize: (record: unknown, ctx: NormalizeContext) => NormalizeResult,
): Normalizer['normalize'] {
  return (record, ctx) => {
    try {
      return normalize(record, ctx);
    } catch (err) {
      return {
        ok: false,
        error: `record: cannot be read (${err instanceof Error ? err.message : 'unexpected value'})`,
      };
    }
  };
}

/** A raw-record normalizer: one per source, pure, never throws. */
export interface Normalizer {
  /** The route name, e.g. `network-monitor`. */
  readonly name: string;
  /** Accepted `logType` values when the source needs one; `undefined` when it takes none. */
  readonly logTypes?: readonly string[];
  /** Whether any logType is accepted (Zeek: any log name, with a generic mapping). */
  readonly anyLogType?: boolean;
  /** Turns one raw record into zero or more NormalizedEvents. Must not throw. */
  normalize(record: unknown, ctx: NormalizeContext): NormalizeResult;
}
