/**
 * Import-time rule limits (docs/detections.md "Rule budgets"): what one rule's detection section may
 * hold before it is compiled, so an import refuses outright a rule no run-time budget could carry.
 * The walk reads the Sigma shape only (selections, lists of selections, keyword lists) and is linear
 * in the document, which the YAML parser has already bounded.
 */

/** The limits of one rule, each named in refusals by its key under `detection.limits`. */
export interface RuleLimits {
  /** Values in one field entry or keyword list. */
  readonly valuesPerField: number;
  /** Values under `re` modifiers in the whole rule. */
  readonly regexesPerRule: number;
  /** Characters of one `re` value. */
  readonly patternLength: number;
  /** Characters of every value of the rule, keywords included. */
  readonly compiledSize: number;
}

/** The defaults of `detection.limits`; SigmaHQ's largest rules sit far below each (docs/detections.md). */
export const DEFAULT_RULE_LIMITS: RuleLimits = {
  valuesPerField: 50_000,
  regexesPerRule: 64,
  patternLength: 1024,
  compiledSize: 1_000_000,
};

/** What the limits count in one rule: totals, and the largest entry and longest pattern (first in order on ties). */
export interface RuleCost {
  readonly regexes: number;
  readonly compiledSize: number;
  readonly largestEntry?: { readonly name: string; readonly keywords: boolean; readonly values: number };
  readonly longestPattern?: { readonly entry: string; readonly length: number };
}

type MutableCost = { -readonly [K in keyof RuleCost]: RuleCost[K] };

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Characters a value adds: its text; a nested list or map (which compiling refuses anyway) adds none. */
function valueLength(value: unknown): number {
  return value !== null && typeof value === 'object' ? 0 : String(value).length;
}

function addEntry(cost: MutableCost, name: string, keywords: boolean, regex: boolean, raw: unknown): void {
  const values = Array.isArray(raw) ? raw : [raw];
  if (cost.largestEntry === undefined || values.length > cost.largestEntry.values)
    cost.largestEntry = { name, keywords, values: values.length };
  for (const value of values) {
    const length = valueLength(value);
    cost.compiledSize += length;
    if (!regex) continue;
    cost.regexes++;
    if (cost.longestPattern === undefined || length > cost.longestPattern.length)
      cost.longestPattern = { entry: name, length };
  }
}

function addMap(cost: MutableCost, map: Record<string, unknown>): void {
  for (const [key, raw] of Object.entries(map)) {
    const [field, ...modifiers] = key.split('|');
    // `'|all': [...]` is a keyword list inside a selection.
    addEntry(cost, key, field === '', modifiers.includes('re'), raw);
  }
}

/** Counts what the limits bound in a parsed Sigma document; a document without a detection map counts nothing. */
export function measureRule(doc: unknown): RuleCost {
  const cost: MutableCost = { regexes: 0, compiledSize: 0 };
  const detection = isMap(doc) ? doc['detection'] : undefined;
  if (!isMap(detection)) return cost;
  for (const [name, selection] of Object.entries(detection)) {
    // As compiling does (match.ts): these two are not search identifiers.
    if (name === 'condition' || name === 'timeframe') continue;
    if (isMap(selection)) addMap(cost, selection);
    else if (Array.isArray(selection) && selection.length > 0 && selection.every(isMap))
      for (const map of selection) addMap(cost, map);
    else addEntry(cost, name, true, false, selection);
  }
  return cost;
}

/**
 * The first limit a rule exceeds, in the order of the config keys, as a message naming the limit by
 * its key and the numbers; undefined when the rule is within every limit.
 */
export function exceededRuleLimit(doc: unknown, limits: RuleLimits): string | undefined {
  const cost = measureRule(doc);
  const over = (what: string, key: keyof RuleLimits): string =>
    `${what}, more than detection.limits.${key} (${limits[key]})`;
  const entry = cost.largestEntry;
  if (entry && entry.values > limits.valuesPerField) {
    const kind = entry.keywords ? 'a keyword list' : 'a field entry';
    return over(`${kind} '${entry.name.slice(0, 200)}' with ${entry.values} values`, 'valuesPerField');
  }
  if (cost.regexes > limits.regexesPerRule) return over(`${cost.regexes} regular expressions`, 'regexesPerRule');
  const pattern = cost.longestPattern;
  if (pattern && pattern.length > limits.patternLength) {
    const what = `a regular expression of ${pattern.length} characters in '${pattern.entry.slice(0, 200)}'`;
    return over(what, 'patternLength');
  }
  if (cost.compiledSize > limits.compiledSize) return over(`${cost.compiledSize} characters of values`, 'compiledSize');
  return undefined;
}
