import { parseTimespan } from './correlation-rule.js';
import { fail, ok, type CompiledSigma, type Result, type Suppression } from './types.js';

export type { Suppression } from './types.js';

/** Bounds of a rule's suppression: fields it groups by, and its longest window (that of a correlation). */
export const SUPPRESSION_LIMITS = { by: 8, fieldName: 256, maxForMs: 30 * 86_400_000 } as const;

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Reads the `by` list: 1..8 distinct field names (a single name as a string is a list of one). */
function readBy(raw: unknown): Result<string[]> {
  const items = typeof raw === 'string' ? [raw] : raw;
  const max = SUPPRESSION_LIMITS.by;
  if (!Array.isArray(items) || items.length === 0 || items.length > max)
    return fail(`suppress.by: expected 1 to ${max} field names`);
  const names: string[] = [];
  for (const item of items) {
    if (typeof item !== 'string' || item.trim() === '' || item.length > SUPPRESSION_LIMITS.fieldName)
      return fail(`suppress.by: expected field names of 1 to ${SUPPRESSION_LIMITS.fieldName} characters`);
    if (names.includes(item)) return fail(`suppress.by: '${item.slice(0, 64)}' is named twice`);
    names.push(item);
  }
  return ok(names);
}

/**
 * Reads a suppression, `{by: [fields], for: timespan}` (a rule document's `suppress:` key or the body of
 * `PUT /api/v1/rules/{id}/suppression`): `for` is a Sigma timespan (`30m`, `1h`, `7d`) of at most 30 days.
 */
export function readSuppression(raw: unknown): Result<Suppression> {
  if (!isMap(raw)) return fail('suppress: expected a map with by (field names) and for (a timespan such as 30m)');
  const unknown = Object.keys(raw).find((k) => k !== 'by' && k !== 'for');
  if (unknown !== undefined) return fail(`suppress: unknown key '${unknown.slice(0, 64)}' (expected by and for)`);
  const by = readBy(raw['by']);
  if (!by.ok) return fail(by.error);
  const forMs = parseTimespan(raw['for']);
  if (!forMs.ok || forMs.value > SUPPRESSION_LIMITS.maxForMs)
    return fail('suppress.for: expected a timespan of 1s to 30d, a number followed by s, m, h or d (e.g. 30m)');
  return ok({ by: by.value, for: raw['for'] as string, forMs: forMs.value });
}

/**
 * Checks a suppression against its rule: a correlation's alerts are grouped by its `group-by` fields, so it
 * can suppress only by those (their values come from the correlation's group).
 */
export function suppressionFits(rule: CompiledSigma, s: Suppression): Result<Suppression> {
  if (rule.kind !== 'correlation') return ok(s);
  const outside = s.by.filter((f) => !rule.groupBy.includes(f));
  if (outside.length === 0) return ok(s);
  const groupBy = rule.groupBy.length > 0 ? rule.groupBy.join(', ') : 'none';
  return fail(
    `suppress.by: ${outside.map((f) => `'${f.slice(0, 64)}'`).join(', ')} not among the correlation's ` +
      `group-by fields (${groupBy})`,
  );
}

/** Reads and checks a rule document's own `suppress:` key, if it has one. */
export function documentSuppression(
  doc: Record<string, unknown>,
  rule: CompiledSigma,
): Result<Suppression | undefined> {
  if (doc['suppress'] === undefined) return ok(undefined);
  const s = readSuppression(doc['suppress']);
  return s.ok ? suppressionFits(rule, s.value) : s;
}
