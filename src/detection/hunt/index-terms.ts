import type { HuntExpr } from './ast.js';
import { plainText } from './value-test.js';

/** Index terms every match must satisfy: for each field, the event's value is one of the list. */
export interface HuntIndexTerms {
  category?: string[];
  class?: string[];
  adapter?: string[];
  entityKey?: string[];
}

const KEYS: Record<string, keyof HuntIndexTerms> = {
  category: 'category',
  class: 'class',
  'source.adapter': 'adapter',
  entityKeys: 'entityKey',
};

/** `field:value` without wildcards on an index field: its key and value. */
function exactTerm(e: HuntExpr): { key: keyof HuntIndexTerms; value: string } | undefined {
  if (e.kind !== 'match' || e.field === null || !Object.hasOwn(KEYS, e.field)) return undefined;
  const value = plainText(e.value);
  return value === undefined ? undefined : { key: KEYS[e.field]!, value };
}

/** One conjunct's term: an exact term, or an `or` of exact terms on one field (a value list). */
function termOf(e: HuntExpr): { key: keyof HuntIndexTerms; values: string[] } | undefined {
  const one = exactTerm(e);
  if (one) return { key: one.key, values: [one.value] };
  if (e.kind !== 'or') return undefined;
  const terms = e.items.map(exactTerm);
  const key = terms[0]?.key;
  if (key === undefined || !terms.every((t) => t?.key === key)) return undefined;
  return { key, values: [...new Set(terms.map((t) => t!.value))] };
}

/**
 * The index terms of a filter: from its top-level conjuncts that are exact, un-negated terms on
 * `category`, `class`, `source.adapter` or `entityKeys` (compared case-sensitively by `matches` too,
 * so the index plan and the predicate agree). Two conjuncts on one field intersect.
 */
export function indexTermsOf(filter: HuntExpr): HuntIndexTerms {
  const out: HuntIndexTerms = {};
  for (const item of filter.kind === 'and' ? filter.items : [filter]) {
    const term = termOf(item);
    if (!term) continue;
    const before = out[term.key];
    out[term.key] = before ? before.filter((v) => term.values.includes(v)) : term.values;
  }
  return out;
}
