/**
 * Where a hunt's field path reads in an event: dotted segments, the longest own key first at each
 * level (Zeek keeps `id.orig_h` as one attribute key), arrays on the way walked into.
 */

const MAX_DEPTH = 64;
/** The most dotted parts one key is tried with, so a long path costs linear time per event. */
export const MAX_KEY_PARTS = 8;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

function rawInto(value: unknown, segs: readonly string[], from: number, out: unknown[], depth: number): void {
  if (from === segs.length) {
    out.push(value);
    return;
  }
  if (!isObject(value) || depth > MAX_DEPTH) return;
  if (Array.isArray(value)) {
    for (const item of value) rawInto(item, segs, from, out, depth + 1);
    return;
  }
  for (let to = Math.min(segs.length, from + MAX_KEY_PARTS); to > from; to--) {
    const key = to === from + 1 ? segs[from]! : segs.slice(from, to).join('.');
    if (Object.hasOwn(value, key)) {
      rawInto(value[key], segs, to, out, depth + 1);
      return;
    }
  }
}

/** The values at a path as stored (an array at the end stays one value); none when absent. */
export function rawValuesAt(root: unknown, segs: readonly string[]): unknown[] {
  const out: unknown[] = [];
  rawInto(root, segs, 0, out, 0);
  return out;
}

function flattenInto(value: unknown, out: unknown[], depth: number): void {
  if (!Array.isArray(value)) out.push(value);
  else if (depth <= MAX_DEPTH) for (const item of value) flattenInto(item, out, depth + 1);
}

/** The leaves at a path: array values count by their elements. */
export function leavesAt(root: unknown, segs: readonly string[]): unknown[] {
  const out: unknown[] = [];
  for (const v of rawValuesAt(root, segs)) flattenInto(v, out, 0);
  return out;
}

/** Visits every scalar leaf (string, number, boolean, null) with its dotted path; arrays are transparent. */
export function walkLeaves(root: unknown, visit: (path: string, leaf: unknown) => boolean): boolean {
  const step = (value: unknown, path: string, depth: number): boolean => {
    if (depth > MAX_DEPTH) return false;
    if (Array.isArray(value)) {
      for (const item of value) if (step(item, path, depth + 1)) return true;
      return false;
    }
    if (!isObject(value)) return visit(path, value);
    for (const key of Object.keys(value))
      if (step(value[key], path === '' ? key : `${path}.${key}`, depth + 1)) return true;
    return false;
  };
  return step(root, '', 0);
}
