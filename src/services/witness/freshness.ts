import { parseCheckpoint } from '../../log/checkpoint.js';
import { COSIGNATURE_V1, cosignatureTime, keyHash, parseNote, type NoteVerifier } from '../../log/signed-note.js';

/** How fresh the newest witness cosignature is, against `log.cosignedMaxAgeSeconds`. */
export interface Freshness {
  /** `off`: no witness configured; `stale`: the newest cosignature (or, with none, the log) is older than allowed. */
  readonly status: 'off' | 'ok' | 'stale';
  readonly maxAgeSeconds: number;
  readonly lastCosignedAt: string | null;
  readonly ageSeconds: number | null;
}

/**
 * The newest time (unix seconds) a tlog-cosignature/v1 line of one of `keys` states on a stored note, or undefined
 * when it has none. The lines are not verified again: the instance stores only cosignatures it verified.
 */
export function cosignedAt(note: string, keys: readonly NoteVerifier[]): number | undefined {
  const parsed = parseNote(note);
  if (!parsed.ok) return undefined;
  const ids = new Set(
    keys
      .filter((k) => k.type === COSIGNATURE_V1)
      .map((k) => `${k.name} ${keyHash(k.name, k.publicKey, COSIGNATURE_V1)}`),
  );
  let newest: number | undefined;
  for (const s of parsed.signatures) {
    if (!ids.has(`${s.name} ${s.keyHash}`)) continue;
    const t = cosignatureTime(s.signature);
    if (t !== undefined && (newest === undefined || t > newest)) newest = t;
  }
  return newest;
}

/** The newest cosignature time (unix ms) on the first of `notes` (newest first) that holds one of `keys`. */
export function newestCosignatureMs(notes: readonly string[], keys: readonly NoteVerifier[]): number | undefined {
  for (const note of notes) {
    const at = cosignedAt(note, keys);
    if (at !== undefined) return at * 1000;
  }
  return undefined;
}

/** The size of a stored checkpoint when `key`'s cosignature is on it, else 0. */
export function sizeCosignedBy(note: string | undefined, key: NoteVerifier): number {
  if (note === undefined || cosignedAt(note, [key]) === undefined) return 0;
  const parsed = parseNote(note);
  const cp = parsed.ok ? parseCheckpoint(parsed.text) : undefined;
  return cp?.ok ? cp.checkpoint.size : 0;
}

/**
 * Whether the instance's checkpoints are witnessed recently enough: stale when the newest cosignature is older than
 * `maxAgeMs`, or when none was ever received and the log itself is older than that (a new log is given the time).
 * Pure.
 */
export function freshness(i: {
  readonly configured: number;
  readonly lastCosignedMs: number | undefined;
  readonly logStartedMs: number | undefined;
  readonly nowMs: number;
  readonly maxAgeMs: number;
}): Freshness {
  const maxAgeSeconds = Math.round(i.maxAgeMs / 1000);
  if (i.configured === 0) return { status: 'off', maxAgeSeconds, lastCosignedAt: null, ageSeconds: null };
  if (i.lastCosignedMs === undefined) {
    const old = i.logStartedMs !== undefined && i.nowMs - i.logStartedMs > i.maxAgeMs;
    return { status: old ? 'stale' : 'ok', maxAgeSeconds, lastCosignedAt: null, ageSeconds: null };
  }
  // A witness's clock a little ahead of ours is not a negative age.
  const age = Math.max(0, i.nowMs - i.lastCosignedMs);
  return {
    status: age > i.maxAgeMs ? 'stale' : 'ok',
    maxAgeSeconds,
    lastCosignedAt: new Date(i.lastCosignedMs).toISOString(),
    ageSeconds: Math.round(age / 1000),
  };
}
