import type { SilenceSettings } from './monitoring-settings.js';

/** Gaps between reports kept per source: the recent history a cadence is learned from. */
export const GAPS_KEPT = 16;
/** Gaps shorter than this are one burst, not a cadence (records of one batch share a time). */
export const MIN_GAP_MS = 1000;

/** The usual gap between a source's reports (the median of its recent gaps), or null before `minSamples` were seen. */
export function usualCadenceMs(gaps: readonly number[], minSamples: number): number | null {
  if (gaps.length < minSamples || gaps.length === 0) return null;
  const sorted = [...gaps].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/** Whether a `*` pattern (or an exact key) matches a source key. */
export function matchesSource(pattern: string, key: string): boolean {
  if (!pattern.includes('*')) return pattern === key;
  const parts = pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's').test(key);
}

/**
 * How long a source may stay silent before it is declared silent: a threshold set for it in
 * `silence.sources`, else `multiplier` times its usual cadence clamped to [floor, ceiling], else
 * (no cadence learned yet) the ceiling.
 */
export function silenceThresholdMs(key: string, gaps: readonly number[], s: SilenceSettings): number {
  for (const [pattern, fixed] of Object.entries(s.sources))
    if (matchesSource(pattern, key)) return fixed.silentAfterSeconds * 1000;
  const usual = usualCadenceMs(gaps, s.minSamples);
  if (usual === null) return s.ceilingSeconds * 1000;
  return Math.min(s.ceilingSeconds * 1000, Math.max(s.floorSeconds * 1000, Math.round(usual * s.multiplier)));
}

const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'] as const;
const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));

/** Whether `key` is in declared quiet hours or an expected silence at `nowMs` (UTC). */
export function isExpectedQuiet(key: string, nowMs: number, s: SilenceSettings): boolean {
  for (const e of s.expectedSilences) {
    if (!e.sources.some((p) => matchesSource(p, key))) continue;
    if (e.from !== undefined && nowMs < Date.parse(e.from)) continue;
    if (e.until !== undefined && nowMs >= Date.parse(e.until)) continue;
    return true;
  }
  const now = new Date(nowMs);
  const minute = now.getUTCHours() * 60 + now.getUTCMinutes();
  const today = DAY_NAMES[now.getUTCDay()]!;
  const yesterday = DAY_NAMES[(now.getUTCDay() + 6) % 7]!;
  for (const q of s.quietHours) {
    if (!q.sources.some((p) => matchesSource(p, key))) continue;
    const from = minutesOf(q.from);
    const to = minutesOf(q.to);
    const on = (day: string) => q.days === undefined || (q.days as readonly string[]).includes(day);
    if (from === to && on(today)) return true;
    if (from < to && minute >= from && minute < to && on(today)) return true;
    if (from > to && ((minute >= from && on(today)) || (minute < to && on(yesterday)))) return true;
  }
  return false;
}
