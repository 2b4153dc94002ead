import {
  CORRELATION_TYPES,
  fail,
  ok,
  type CompiledCorrelation,
  type CorrelationType,
  type CountCondition,
  type Result,
  type RuleMeta,
} from './types.js';

/** Bounds of a correlation rule; the per-group cap of correlate.ts is the largest threshold allowed. */
export const CORRELATION_LIMITS = {
  rules: 64,
  groupBy: 16,
  maxThreshold: 1000,
  maxTimespanMs: 30 * 24 * 3600 * 1000,
} as const;

const UNIT_MS: Readonly<Record<string, number>> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const COUNT_KEYS = ['gt', 'gte', 'lt', 'lte', 'eq', 'neq'] as const;

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function stringList(value: unknown, key: string, max: number, required: boolean): Result<string[]> {
  if (value === undefined || value === null) return required ? fail(`correlation.${key}: required`) : ok([]);
  const items = typeof value === 'string' ? [value] : value;
  if (!Array.isArray(items) || items.length === 0 || items.length > max)
    return fail(`correlation.${key}: expected 1 to ${max} names`);
  if (!items.every((i): i is string => typeof i === 'string' && i !== '' && i.length <= 256))
    return fail(`correlation.${key}: expected a list of names`);
  return ok(items);
}

/** Parses a timespan such as `90s`, `5m`, `1h`, `1d` (spec: number plus lower-case unit). */
export function parseTimespan(value: unknown): Result<number> {
  const m = typeof value === 'string' ? /^(\d{1,9})([smhd])$/.exec(value) : null;
  if (!m) return fail(`correlation.timespan: expected a number followed by s, m, h or d (e.g. 5m)`);
  const ms = Number(m[1]) * UNIT_MS[m[2]!]!;
  if (ms <= 0 || ms > CORRELATION_LIMITS.maxTimespanMs) return fail('correlation.timespan: must be between 1s and 30d');
  return ok(ms);
}

/** The least count a condition accepts (from gt, gte, eq), or undefined when it has no lower bound. */
function lowerBound(c: CountCondition): number | undefined {
  const lowers = [c.gt !== undefined ? c.gt + 1 : undefined, c.gte, c.eq].filter((n): n is number => n !== undefined);
  return lowers.length > 0 ? Math.max(...lowers) : undefined;
}

function countCondition(value: Record<string, unknown>, allowField: boolean): Result<CountCondition> {
  const out: Record<string, number> = {};
  for (const [key, bound] of Object.entries(value)) {
    if (key === 'field' && allowField) continue;
    if (!(COUNT_KEYS as readonly string[]).includes(key))
      return fail(`correlation.condition: unknown operator '${key}' (use gt, gte, lt, lte, eq, neq)`);
    if (typeof bound !== 'number' || !Number.isInteger(bound) || bound < 0)
      return fail(`correlation.condition.${key}: expected a whole number`);
    out[key] = bound;
  }
  const lower = lowerBound(out);
  // Counts are evaluated as hits arrive, so only a condition a growing count can reach is meaningful.
  if (lower === undefined || lower < 1)
    return fail(
      'correlation.condition: needs gt, gte or eq of at least one hit (upper bounds alone need end-of-window ' +
        'evaluation, which is not supported)',
    );
  if (lower > CORRELATION_LIMITS.maxThreshold)
    return fail(`correlation.condition: thresholds above ${CORRELATION_LIMITS.maxThreshold} are not supported`);
  return ok(out);
}

function conditionFor(
  type: CorrelationType,
  raw: unknown,
  rules: string[],
): Result<{ condition: CountCondition; field?: string }> {
  if (type === 'temporal' || type === 'temporal_ordered') {
    // temporal counts distinct rules seen; temporal_ordered needs the whole list (A, B, A is three steps).
    const ruleCount = type === 'temporal' ? new Set(rules).size : rules.length;
    if (raw === undefined || raw === null) return ok({ condition: { gte: ruleCount } });
    if (type === 'temporal_ordered')
      return fail(
        'correlation.condition: temporal_ordered always requires every rule in order; a condition is not supported',
      );
    if (!isMap(raw)) return fail('correlation.condition: only a count map (e.g. {gte: 2}) is supported for temporal');
    const counted = countCondition(raw, false);
    if (!counted.ok) return fail(counted.error);
    const need = lowerBound(counted.value) ?? 0;
    if (need > ruleCount)
      return fail(`correlation.condition: asks for ${need} distinct rules but only ${ruleCount} are referenced`);
    return ok({ condition: counted.value });
  }
  if (!isMap(raw)) return fail(`correlation.condition: ${type} needs a condition such as {gte: 10}`);
  const condition = countCondition(raw, type === 'value_count');
  if (!condition.ok) return fail(condition.error);
  if (type !== 'value_count') return ok({ condition: condition.value });
  const field = raw['field'];
  if (typeof field !== 'string' || field === '')
    return fail('correlation.condition.field: value_count needs the field whose distinct values are counted');
  return ok({ condition: condition.value, field });
}

function aliasesOf(raw: unknown): Result<Record<string, Record<string, string>>> {
  if (raw === undefined || raw === null) return ok({});
  if (!isMap(raw)) return fail('correlation.aliases: expected a map of alias -> {rule: field}');
  const out: Record<string, Record<string, string>> = {};
  for (const [alias, perRule] of Object.entries(raw)) {
    if (!isMap(perRule) || !Object.values(perRule).every((f) => typeof f === 'string' && f !== '')) {
      return fail(`correlation.aliases.${alias}: expected a map of rule name -> field name`);
    }
    out[alias] = perRule as Record<string, string>;
  }
  return ok(out);
}

function typeOf(raw: unknown): Result<CorrelationType> {
  const found = CORRELATION_TYPES.find((t) => t === raw);
  if (found) return ok(found);
  if (typeof raw === 'string' && /^value_(sum|avg|percentile|min|max|median)$/.test(raw))
    return fail(`correlation.type: '${raw}' is not supported`);
  return fail(`correlation.type: expected one of ${CORRELATION_TYPES.join(', ')}`);
}

/** Compiles the `correlation:` section of a document whose metadata was already read. */
export function compileCorrelationSection(doc: Record<string, unknown>, meta: RuleMeta): Result<CompiledCorrelation> {
  const section = doc['correlation'];
  if (!isMap(section)) return fail('correlation: expected a map');
  if (doc['detection'] !== undefined || doc['logsource'] !== undefined)
    return fail('a correlation rule cannot also have logsource or detection');
  const type = typeOf(section['type']);
  if (!type.ok) return fail(type.error);
  const rules = stringList(section['rules'], 'rules', CORRELATION_LIMITS.rules, true);
  if (!rules.ok) return fail(rules.error);
  const groupBy = stringList(section['group-by'], 'group-by', CORRELATION_LIMITS.groupBy, false);
  if (!groupBy.ok) return fail(groupBy.error);
  const timespan = parseTimespan(section['timespan']);
  if (!timespan.ok) return fail(timespan.error);
  const condition = conditionFor(type.value, section['condition'], rules.value);
  if (!condition.ok) return fail(condition.error);
  const aliases = aliasesOf(section['aliases']);
  if (!aliases.ok) return fail(aliases.error);
  const generate = section['generate'] ?? doc['generate'] ?? false;
  if (typeof generate !== 'boolean') return fail('correlation.generate: expected true or false');
  return ok({
    ...meta,
    kind: 'correlation',
    type: type.value,
    rules: rules.value,
    groupBy: groupBy.value,
    timespanMs: timespan.value,
    condition: condition.value.condition,
    aliases: aliases.value,
    generate,
    ...(condition.value.field !== undefined ? { field: condition.value.field } : {}),
  });
}
