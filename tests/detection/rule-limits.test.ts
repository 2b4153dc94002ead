import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import * as v from 'valibot';
import {
  DEFAULT_RULE_LIMITS,
  exceededRuleLimit,
  measureRule,
  type RuleLimits,
} from '../../src/detection/rule-limits.js';
import { parseSigmaText } from '../../src/detection/sigma-yaml.js';
import { ConfigSchema } from '../../src/services/config-schema.js';
import { fixturePath } from '../helpers/paths.js';
import { manyRegexesRule, manyValuesRule } from '../helpers/rule-limit-fixtures.js';

/** A rule document around a detection section. */
const rule = (detection: Record<string, unknown>) => ({
  title: 'T',
  id: 'r-1',
  logsource: { product: 'zeek', service: 'http' },
  detection: { ...detection, condition: '1 of them' },
});

/** Limits that never bind, but for the ones a test sets. */
const only = (over: Partial<RuleLimits>): RuleLimits => ({
  valuesPerField: 1e9, regexesPerRule: 1e9, patternLength: 1e9, compiledSize: 1e9, ...over,
});

const texts = (n: number, length = 3) => Array.from({ length: n }, (_, i) => `${i}`.padStart(length, 'v'));

function parseOne(text: string): unknown {
  const parsed = parseSigmaText(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.error);
  assert.equal(parsed.docs.length, 1);
  return parsed.docs[0];
}

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? yamlFiles(join(dir, e.name)) : /\.ya?ml$/.test(e.name) ? [join(dir, e.name)] : []);
}

describe('rule limits (import-time)', () => {
  it('has the defaults of the configuration schema', () => {
    assert.deepEqual(v.parse(ConfigSchema, {}).detection.limits, DEFAULT_RULE_LIMITS);
  });

  it('accepts a field entry of exactly valuesPerField values and refuses one more, naming the entry', () => {
    const limits = only({ valuesPerField: 5 });
    assert.equal(exceededRuleLimit(rule({ sel: { 'uri|contains': texts(5) } }), limits), undefined);
    assert.equal(
      exceededRuleLimit(rule({ sel: { method: 'GET', 'uri|contains': texts(6) } }), limits),
      `a field entry 'uri|contains' with 6 values, more than detection.limits.valuesPerField (5)`,
    );
  });

  it('counts each map of a list of selections, and keyword lists, as entries of their own', () => {
    const limits = only({ valuesPerField: 5 });
    assert.equal(exceededRuleLimit(rule({ sel: [{ uri: texts(5) }, { uri: texts(5) }] }), limits), undefined);
    assert.match(exceededRuleLimit(rule({ sel: [{ uri: texts(5) }, { host: texts(6) }] }), limits) ?? '', /'host' with 6/);
    assert.equal(exceededRuleLimit(rule({ keywords: texts(5) }), limits), undefined);
    assert.equal(
      exceededRuleLimit(rule({ keywords: texts(6) }), limits),
      `a keyword list 'keywords' with 6 values, more than detection.limits.valuesPerField (5)`,
    );
    assert.match(exceededRuleLimit(rule({ sel: { '|all': texts(6) } }), limits) ?? '', /^a keyword list '\|all' with 6/);
  });

  it('accepts exactly regexesPerRule regular expressions in a rule and refuses one more, across selections', () => {
    const limits = only({ regexesPerRule: 3 });
    const three = rule({ a: { 'uri|re': ['a', 'b'] }, b: { 'host|re|i': 'c', uri: texts(20) } });
    assert.equal(exceededRuleLimit(three, limits), undefined);
    assert.equal(measureRule(three).regexes, 3, 'values of fields without re are no regular expressions');
    const four = rule({ a: { 'uri|re': ['a', 'b'] }, b: [{ 'host|re|i': 'c' }, { 'uri|re': 'd' }] });
    assert.equal(
      exceededRuleLimit(four, limits),
      `4 regular expressions, more than detection.limits.regexesPerRule (3)`,
    );
  });

  it('accepts a regular expression of exactly patternLength characters and refuses one more', () => {
    const limits = only({ patternLength: 10 });
    assert.equal(exceededRuleLimit(rule({ sel: { 'uri|re': ['x'.repeat(10), 'y'], host: 'z'.repeat(50) } }), limits), undefined);
    assert.equal(
      exceededRuleLimit(rule({ sel: { 'uri|re': ['x'.repeat(10)] }, other: { 'host|re': 'y'.repeat(11) } }), limits),
      `a regular expression of 11 characters in 'host|re', more than detection.limits.patternLength (10)`,
    );
  });

  it('accepts exactly compiledSize characters of values, keywords and numbers included, and refuses one more', () => {
    const limits = only({ compiledSize: 12 });
    // 'abc', 8080, true and 'd': 3 + 4 + 4 + 1 = 12; the condition and the timeframe are no values.
    const at = rule({ sel: { uri: 'abc', port: 8080, tls: true }, kw: ['d'], timeframe: '5m' });
    assert.equal(exceededRuleLimit(at, limits), undefined);
    assert.equal(measureRule(at).compiledSize, 12);
    assert.equal(
      exceededRuleLimit(rule({ sel: { uri: 'abc', port: 8080, tls: true }, kw: ['de'], timeframe: '5m' }), limits),
      `13 characters of values, more than detection.limits.compiledSize (12)`,
    );
  });

  it('counts nothing in a correlation or a document without a detection map', () => {
    const correlation = { title: 'C', correlation: { type: 'event_count', rules: ['a'], timespan: '5m' } };
    assert.deepEqual(measureRule(correlation), { regexes: 0, compiledSize: 0 });
    for (const doc of [null, 'text', [1, 2], { detection: 'x' }, { detection: [{ a: 1 }] }])
      assert.equal(exceededRuleLimit(doc, only({ compiledSize: 1, valuesPerField: 1 })), undefined);
  });

  it('refuses the rule of 8,000 regular expressions by regexesPerRule under the defaults', () => {
    const doc = parseOne(manyRegexesRule());
    assert.equal(measureRule(doc).regexes, 8000);
    assert.equal(
      exceededRuleLimit(doc, DEFAULT_RULE_LIMITS),
      '8000 regular expressions, more than detection.limits.regexesPerRule (64)',
    );
  });

  it('accepts the rule of 23,600 values under the defaults, and counts every value', () => {
    const doc = parseOne(manyValuesRule());
    assert.equal(exceededRuleLimit(doc, DEFAULT_RULE_LIMITS), undefined);
    assert.deepEqual(measureRule(doc).largestEntry, { name: 'uri|contains', keywords: false, values: 23_600 });
    assert.match(exceededRuleLimit(doc, { ...DEFAULT_RULE_LIMITS, valuesPerField: 23_599 }) ?? '', /23600 values/);
  });

  it('accepts every SigmaHQ rule under the defaults, whose largest counts are those docs/detections.md quotes', () => {
    const files = yamlFiles(fixturePath('sigmahq', 'rules'));
    const refused: string[] = [];
    const max = { regexes: 0, pattern: 0, values: 0, size: 0 };
    let checked = 0;
    for (const file of files) {
      const parsed = parseSigmaText(readFileSync(file, 'utf8'));
      assert.ok(parsed.ok, `${file}: ${parsed.ok ? '' : parsed.error}`);
      for (const doc of parsed.docs) {
        checked++;
        const exceeded = exceededRuleLimit(doc, DEFAULT_RULE_LIMITS);
        if (exceeded !== undefined) refused.push(`${file}: ${exceeded}`);
        const cost = measureRule(doc);
        max.regexes = Math.max(max.regexes, cost.regexes);
        max.pattern = Math.max(max.pattern, cost.longestPattern?.length ?? 0);
        max.values = Math.max(max.values, cost.largestEntry?.values ?? 0);
        max.size = Math.max(max.size, cost.compiledSize);
      }
    }
    assert.ok(checked > 3000, `${checked} documents checked`);
    assert.deepEqual(refused, []);
    assert.deepEqual(max, { regexes: 19, pattern: 130, values: 4432, size: 219_165 });
  });
});

/** A generated field entry: its key, whether it is a regex entry, and its values. */
interface GenEntry { readonly key: string; readonly regex: boolean; readonly values: Array<string | number> }
type GenSelection =
  | { readonly kind: 'map'; readonly entries: GenEntry[] }
  | { readonly kind: 'list'; readonly maps: GenEntry[][] }
  | { readonly kind: 'keywords'; readonly values: Array<string | number> };

const value = fc.oneof(fc.string({ maxLength: 12 }), fc.integer({ min: -1000, max: 100_000 }));
const values = fc.array(value, { minLength: 1, maxLength: 8 });
const entry = fc
  .record({
    field: fc.constantFrom('uri', 'host', 'method', 'query'),
    modifiers: fc.constantFrom('', '|contains', '|re', '|re|i', '|endswith', '|contains|all', '|cased|re'),
    values,
  })
  .map((e): GenEntry => ({ key: `${e.field}${e.modifiers}`, regex: e.modifiers.includes('|re'), values: e.values }));
const entries = fc.uniqueArray(entry, { minLength: 1, maxLength: 4, selector: (e) => e.key });
const selection: fc.Arbitrary<GenSelection> = fc.oneof(
  entries.map((es) => ({ kind: 'map' as const, entries: es })),
  fc.array(entries, { minLength: 1, maxLength: 3 }).map((maps) => ({ kind: 'list' as const, maps })),
  values.map((vs) => ({ kind: 'keywords' as const, values: vs })),
);
const limits = fc.record({
  valuesPerField: fc.integer({ min: 1, max: 8 }),
  regexesPerRule: fc.integer({ min: 0, max: 10 }),
  patternLength: fc.integer({ min: 1, max: 12 }),
  compiledSize: fc.integer({ min: 1, max: 150 }),
});

/** One value as a single entry holds it: alone as a scalar, or a list. */
const written = (vs: Array<string | number>, scalar: boolean) => (scalar && vs.length === 1 ? vs[0] : vs);

function documentOf(selections: GenSelection[], scalar: boolean): Record<string, unknown> {
  const map = (es: GenEntry[]) => Object.fromEntries(es.map((e) => [e.key, written(e.values, scalar)]));
  const detection: Record<string, unknown> = { condition: 'x'.repeat(500), timeframe: '1h' };
  selections.forEach((s, i) => {
    detection[`s${i}`] = s.kind === 'map' ? map(s.entries) : s.kind === 'list' ? s.maps.map(map) : written(s.values, scalar);
  });
  return { title: 'Generated', logsource: { product: 'zeek', service: 'http' }, detection };
}

/** The limit keys the generated rule exceeds, in config order, counted from the generated structure. */
function expectedExceeded(selections: GenSelection[], l: RuleLimits): Array<keyof RuleLimits> {
  const lists = selections.flatMap<{ regex: boolean; values: Array<string | number> }>((s) =>
    s.kind === 'map' ? s.entries : s.kind === 'list' ? s.maps.flat() : [{ regex: false, values: s.values }]);
  const regexValues = lists.filter((e) => e.regex).flatMap((e) => e.values.map(String));
  const quantities: Record<keyof RuleLimits, number> = {
    valuesPerField: Math.max(...lists.map((e) => e.values.length)),
    regexesPerRule: regexValues.length,
    patternLength: Math.max(0, ...regexValues.map((r) => r.length)),
    compiledSize: lists.reduce((n, e) => n + e.values.reduce<number>((m, x) => m + String(x).length, 0), 0),
  };
  return (['valuesPerField', 'regexesPerRule', 'patternLength', 'compiledSize'] as const).filter((k) => quantities[k] > l[k]);
}

describe('rule limits (property)', () => {
  it('refuses a rule iff one counted quantity exceeds its limit, naming the first such limit', () => {
    const seen = { accepted: 0, refused: new Set<string>() };
    fc.assert(fc.property(fc.array(selection, { minLength: 1, maxLength: 4 }), limits, fc.boolean(), (selections, l, scalar) => {
      const exceeded = expectedExceeded(selections, l);
      const message = exceededRuleLimit(documentOf(selections, scalar), l);
      if (exceeded.length === 0) {
        assert.equal(message, undefined);
        seen.accepted++;
        return;
      }
      assert.match(message ?? '', new RegExp(`more than detection\\.limits\\.${exceeded[0]} \\(${l[exceeded[0]!]}\\)$`));
      seen.refused.add(exceeded[0]!);
    }), { numRuns: 2000 });
    // Both answers, and a refusal by each limit, were exercised.
    assert.ok(seen.accepted > 50, `${seen.accepted} accepted`);
    assert.equal(seen.refused.size, 4, [...seen.refused].join());
  });
});
