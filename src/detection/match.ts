import type { NormalizedEvent } from '../events/normalized-event.js';
import { bindCondition, parseConditionValue, referencedIdentifiers } from './condition.js';
import { backtracks, compileFieldTest, FIELD_LIMITS, type FieldTest } from './field-test.js';
import { fieldAccessor, keywordValues, someKeywordText, type Accessor, type LogsourceMapping } from './logsources.js';
import { planModifiers } from './modifiers.js';
import {
  conditionNeed,
  conjunctionNeed,
  fieldLiterals,
  keywordLiterals,
  type Need,
  type Trigger,
} from './prefilter.js';
import { literalSetTest, VALUE_SET_THRESHOLD } from './value-set.js';
import { fail, ok, type MatchDetail, type Result } from './types.js';
import { anchorPattern, compilePattern, parsePattern, type StringTest } from './wildcard.js';

/** Bounds on a detection section. */
export const DETECTION_LIMITS = { identifiers: 256, entries: 256 } as const;

type MutableDetail = { selections: string[]; fields: MatchDetail['fields']; keywords: string[] };

interface FieldTerm {
  readonly kind: 'field';
  readonly field: string;
  readonly modifiers: string[];
  readonly get: Accessor;
  readonly test: FieldTest;
  /** What the field must contain for the test to hold (prefilter.ts), when that can be said. */
  readonly trigger?: Trigger;
  /** Whether a value's regular expression needs V8's backtracking engine (field-test.ts `backtracks`). */
  readonly backtracks: boolean;
}

interface KeywordTerm {
  readonly kind: 'keywords';
  readonly keywords: ReadonlyArray<{ readonly text: string; readonly test: StringTest }>;
  readonly all: boolean;
  /** Whether one text holds any of the keywords: each searched text is read once for the whole list. */
  readonly anyIn: StringTest;
  /** What the searched texts must contain for the term to hold (prefilter.ts), when that can be said. */
  readonly trigger?: Trigger;
}

type Term = FieldTerm | KeywordTerm;

/** One search identifier: a conjunction of terms, or a list of such conjunctions (ORed). */
interface Selection {
  readonly name: string;
  readonly alternatives: ReadonlyArray<readonly Term[]>;
}

/** A compiled detection section: the matcher and the fields it reads. */
export interface CompiledDetection {
  readonly fields: string[];
  /** The prefilter's triggers: the rule can only match when one holds (undefined: always try the rule). */
  readonly triggers?: readonly Trigger[];
  /** Whether a regular expression of the section needs V8's backtracking engine: its cost has no bound. */
  readonly backtracks: boolean;
  match(event: NormalizedEvent): MatchDetail | undefined;
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function keywordTerm(values: unknown[], all: boolean): KeywordTerm | string {
  if (values.length === 0) return 'empty keyword list';
  if (values.length > FIELD_LIMITS.values) return `more than ${FIELD_LIMITS.values} keywords`;
  const keywords: Array<{ text: string; test: StringTest }> = [];
  for (const v of values) {
    if (typeof v !== 'string' && typeof v !== 'number') return 'keywords must be strings or numbers';
    const text = String(v);
    if (text.length > FIELD_LIMITS.valueLength) return `a keyword longer than ${FIELD_LIMITS.valueLength} characters`;
    // A keyword is found anywhere in the searched text, case-insensitively.
    keywords.push({ text, test: compilePattern(anchorPattern(parsePattern(text), 'contains'), false) });
  }
  // Many plain keywords are found in one pass over the text (value-set.ts), the rest one by one.
  const literal = keywords.filter((k) => !/[*?\\]/.test(k.text));
  const useSet = literal.length >= VALUE_SET_THRESHOLD;
  const inSet = useSet
    ? literalSetTest(
        literal.map((k) => k.text),
        'contains',
        false,
      )
    : undefined;
  const others = useSet ? keywords.filter((k) => /[*?\\]/.test(k.text)) : keywords;
  const anyIn: StringTest = (text) => {
    if (inSet?.(text)) return true;
    for (const k of others) if (k.test(text)) return true;
    return false;
  };
  const literals = keywordLiterals(
    keywords.map((k) => k.text),
    all,
  );
  return {
    kind: 'keywords',
    keywords,
    all,
    anyIn,
    ...(literals ? { trigger: { field: '', via: 'keywords', get: keywordValues, literals } } : {}),
  };
}

function fieldTerm(key: string, raw: unknown, mapping: LogsourceMapping): Term | string {
  const [field = '', ...modifiers] = key.split('|');
  if (field === '') {
    if (modifiers.length === 1 && modifiers[0] === 'all') return keywordTerm(Array.isArray(raw) ? raw : [raw], true);
    return `'${key}': the only keyword modifier is '|all'`;
  }
  if (field.length > 256) return 'a field name longer than 256 characters';
  const plan = planModifiers(modifiers);
  if (typeof plan === 'string') return `field '${field}': ${plan}`;
  const accessor = (name: string): Accessor => fieldAccessor(name, mapping.aliases, mapping.resolve);
  const test = compileFieldTest(plan, raw, accessor);
  if (typeof test === 'string') return `field '${field}': ${test}`;
  const get = accessor(field);
  const literals = fieldLiterals(plan, raw);
  const aliased = Object.hasOwn(mapping.aliases, field) || mapping.resolve !== undefined;
  const aliases = Object.keys(mapping.aliases).sort().join(',');
  const via = aliased ? `${mapping.indexKeys.join(',')}|${aliases}|${mapping.resolve ? 'resolve' : ''}` : '';
  return {
    kind: 'field',
    field,
    modifiers,
    get,
    test,
    backtracks: backtracks(plan, raw),
    ...(literals ? { trigger: { field, via, get, literals } } : {}),
  };
}

function mapTerms(map: Record<string, unknown>, mapping: LogsourceMapping): Term[] | string {
  const keys = Object.keys(map);
  if (keys.length === 0) return 'empty selection';
  if (keys.length > DETECTION_LIMITS.entries) return `more than ${DETECTION_LIMITS.entries} fields in one selection`;
  const terms: Term[] = [];
  for (const key of keys) {
    const term = fieldTerm(key, map[key], mapping);
    if (typeof term === 'string') return term;
    terms.push(term);
  }
  return terms;
}

function compileSelection(name: string, value: unknown, mapping: LogsourceMapping): Selection | string {
  if (isMap(value)) {
    const terms = mapTerms(value, mapping);
    return typeof terms === 'string' ? terms : { name, alternatives: [terms] };
  }
  if (typeof value === 'string' || typeof value === 'number') value = [value];
  if (!Array.isArray(value) || value.length === 0)
    return 'expected a map of fields, a list of maps or a list of keywords';
  if (value.every(isMap)) {
    if (value.length > DETECTION_LIMITS.entries) return `more than ${DETECTION_LIMITS.entries} alternatives`;
    const alternatives: Term[][] = [];
    for (const map of value) {
      const terms = mapTerms(map, mapping);
      if (typeof terms === 'string') return terms;
      alternatives.push(terms);
    }
    return { name, alternatives };
  }
  const keywords = keywordTerm(value, false);
  return typeof keywords === 'string' ? keywords : { name, alternatives: [[keywords]] };
}

/** A selection's need: any of its alternatives' needs. */
function selectionNeed(selection: Selection): Need {
  const needs: Need[] = selection.alternatives.map((terms) =>
    conjunctionNeed(terms.map((t) => (t.trigger ? { trigger: t.trigger } : {}))),
  );
  if (needs.some((n) => n === undefined)) return undefined;
  return needs.flatMap((n) => n!);
}

function keywordHolds(term: KeywordTerm, event: NormalizedEvent): boolean {
  if (!term.all) return someKeywordText(event, term.anyIn);
  for (const k of term.keywords) if (!someKeywordText(event, k.test)) return false;
  return true;
}

function termHolds(term: Term, event: NormalizedEvent): boolean {
  return term.kind === 'field' ? term.test(term.get(event), event) : keywordHolds(term, event);
}

function conjunctionHolds(terms: readonly Term[], event: NormalizedEvent): boolean {
  for (const term of terms) if (!termHolds(term, event)) return false;
  return true;
}

function selectionHolds(selection: Selection, event: NormalizedEvent): boolean {
  for (const terms of selection.alternatives) if (conjunctionHolds(terms, event)) return true;
  return false;
}

function explain(selection: Selection, event: NormalizedEvent, detail: MutableDetail): void {
  const terms = selection.alternatives.find((t) => conjunctionHolds(t, event)) ?? [];
  for (const term of terms) {
    if (term.kind === 'field') {
      detail.fields.push({
        selection: selection.name,
        field: term.field,
        modifiers: term.modifiers,
        value: term.get(event) ?? null,
      });
    } else {
      for (const k of term.keywords)
        if (someKeywordText(event, k.test) && !detail.keywords.includes(k.text)) detail.keywords.push(k.text);
    }
  }
}

function compileSelections(
  detection: Record<string, unknown>,
  mapping: LogsourceMapping,
): Result<Map<string, Selection>> {
  const selections = new Map<string, Selection>();
  for (const [name, value] of Object.entries(detection)) {
    // `timeframe` belonged to Sigma 1.0 aggregations; without one it has no effect.
    if (name === 'condition' || name === 'timeframe') continue;
    if (selections.size >= DETECTION_LIMITS.identifiers)
      return fail(`more than ${DETECTION_LIMITS.identifiers} search identifiers`);
    const selection = compileSelection(name, value, mapping);
    if (typeof selection === 'string') return fail(`detection.${name}: ${selection}`);
    selections.set(name, selection);
  }
  return ok(selections);
}

/**
 * Compiles a `detection:` section against a logsource mapping; evaluation is lazy and allocation-free until a match.
 */
export function compileDetection(detection: unknown, mapping: LogsourceMapping): Result<CompiledDetection> {
  if (!isMap(detection)) return fail('detection: expected a map of search identifiers and a condition');
  if (detection['condition'] === undefined) return fail('detection: missing condition');
  const compiled = compileSelections(detection, mapping);
  if (!compiled.ok) return compiled;
  const selections = compiled.value;
  const names = [...selections.keys()];
  const parsed = parseConditionValue(detection['condition']);
  if (!parsed.ok) return fail(`detection.condition: ${parsed.error}`);
  const bound = bindCondition<NormalizedEvent>(parsed.value, names, (name) => {
    const selection = selections.get(name)!;
    return (event) => selectionHolds(selection, event);
  });
  if (!bound.ok) return fail(`detection.condition: ${bound.error}`);
  const condition = bound.value;
  const mentioned = referencedIdentifiers(parsed.value, names).map((name) => selections.get(name)!);
  const terms = [...selections.values()].flatMap((s) => s.alternatives.flat());
  const fields = [...new Set(terms.flatMap((t) => (t.kind === 'field' ? [t.field] : [])))];
  const need = conditionNeed(
    parsed.value,
    names,
    (name) => selectionNeed(selections.get(name)!),
    (pattern) => referencedIdentifiers({ kind: 'of', quantifier: 'one', pattern }, names),
  );
  return ok({
    fields,
    ...(need && need.length > 0 ? { triggers: need } : {}),
    backtracks: terms.some((t) => t.kind === 'field' && t.backtracks),
    match(event) {
      if (!condition(event)) return undefined;
      const detail: MutableDetail = { selections: [], fields: [], keywords: [] };
      for (const selection of mentioned) {
        if (!selectionHolds(selection, event)) continue;
        detail.selections.push(selection.name);
        explain(selection, event, detail);
      }
      return detail;
    },
  });
}
