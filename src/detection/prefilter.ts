import type { NormalizedEvent } from '../events/normalized-event.js';
import type { ConditionNode } from './condition.js';
import type { FieldPlan } from './modifiers.js';
import type { Accessor } from './logsources.js';
import { DASH_CHARACTERS, parsePattern } from './wildcard.js';

/**
 * Rule prefiltering for large rule sets (SigmaHQ's 1,200 Windows process_creation rules share one
 * index key). From a rule's condition, a *trigger* is derived: fields and literal texts such that the
 * rule can only match when one of those fields contains one of its texts (case-insensitively). A
 * field test `Image|endswith: '\wmic.exe'` implies that Image contains `\wmic.exe`; `a and b` needs
 * what either needs; `a or b` needs what both need; keywords need one of their texts in the texts a
 * keyword search reads; `not`, regexes and comparisons give no trigger, and such a rule is simply
 * always tried. The engine then finds, per event and field,
 * every literal present in one Aho-Corasick pass and tries only the rules they trigger.
 */

/** One necessary condition: the field (read as the rule reads it) contains one of the texts (lower-case). */
export interface Trigger {
  readonly field: string;
  /** Groups rules whose accessor for `field` behaves alike (the logsource mapping's name when aliased). */
  readonly via: string;
  readonly get: Accessor;
  readonly literals: readonly string[];
}

/** A rule's need: any of the triggers must hold; undefined when no trigger can be derived. */
export type Need = readonly Trigger[] | undefined;

const DASHES = new RegExp(`[${DASH_CHARACTERS.replace('-', '\\-')}]`);

/** The longest wildcard-free piece of a Sigma value (lower-cased), or undefined when none is usable. */
function literalOf(value: string, windash: boolean): string | undefined {
  let best = '';
  for (const token of parsePattern(value)) {
    if (token.kind !== 'text') continue;
    for (const piece of windash ? token.text.split(DASHES) : [token.text]) if (piece.length > best.length) best = piece;
  }
  return best === '' ? undefined : best.toLowerCase();
}

/** The texts one of which a field must contain for the field test to hold, or undefined. */
export function fieldLiterals(plan: FieldPlan, raw: unknown): string[] | undefined {
  if (plan.operator || plan.base64 || plan.neq) return undefined;
  const values = Array.isArray(raw) ? raw : [raw];
  if (values.length === 0 || !values.every((v): v is string => typeof v === 'string')) return undefined;
  const literals: string[] = [];
  for (const v of values) {
    const lit = literalOf(v, plan.windash);
    if (lit === undefined) return undefined;
    literals.push(lit);
  }
  // With `|all` every value must be found: the longest one alone is necessary.
  if (plan.all) return [literals.reduce((a, b) => (b.length > a.length ? b : a))];
  return [...new Set(literals)];
}

/** The texts one of which a keyword search must find (with `|all`, the longest keyword's alone), or undefined. */
export function keywordLiterals(keywords: readonly string[], all: boolean): string[] | undefined {
  const literals: string[] = [];
  for (const k of keywords) {
    const lit = literalOf(k, false);
    if (lit === undefined) return undefined;
    literals.push(lit);
  }
  if (literals.length === 0) return undefined;
  if (all) return [literals.reduce((a, b) => (b.length > a.length ? b : a))];
  return [...new Set(literals)];
}

/** How selective a need is: its shortest text (longer texts trigger fewer rules); larger is better. */
function score(need: readonly Trigger[]): number {
  let shortest = Infinity;
  for (const t of need) for (const l of t.literals) shortest = Math.min(shortest, l.length);
  return shortest === Infinity ? 0 : shortest - need.length / 1000;
}

function best(needs: readonly Need[]): Need {
  let chosen: readonly Trigger[] | undefined;
  for (const n of needs) if (n !== undefined && (chosen === undefined || score(n) > score(chosen))) chosen = n;
  return chosen;
}

function union(needs: readonly Need[]): Need {
  if (needs.length === 0 || needs.some((n) => n === undefined)) return undefined;
  return needs.flatMap((n) => n!);
}

/** The need of a whole condition, given the need of each search identifier. */
export function conditionNeed(
  node: ConditionNode,
  names: readonly string[],
  need: (name: string) => Need,
  expand: (pattern: string) => string[],
): Need {
  switch (node.kind) {
    case 'id':
      return names.includes(node.name) ? need(node.name) : undefined;
    case 'not':
      return undefined;
    case 'and':
      return best(node.operands.map((o) => conditionNeed(o, names, need, expand)));
    case 'or':
      return union(node.operands.map((o) => conditionNeed(o, names, need, expand)));
    case 'of': {
      const parts = expand(node.pattern).map(need);
      return node.quantifier === 'all' ? best(parts) : union(parts);
    }
  }
}

/** The need of one conjunction of field terms: its most selective term. */
export function conjunctionNeed(terms: ReadonlyArray<{ trigger?: Trigger }>): Need {
  return best(terms.map((t) => (t.trigger ? [t.trigger] : undefined)));
}

/** An Aho-Corasick automaton over lower-case literals reporting every literal id found. */
export interface LiteralIndex {
  /** Calls `found` with the id of each literal occurring in `text` (possibly more than once). */
  scan(text: string, found: (id: number) => void): void;
  /** Whether any literal occurs in `text` (the empty literal occurs in every text); stops at the first. */
  any(text: string): boolean;
}

/** The outputs of a node that has none, shared. */
const NO_OUTPUT: readonly number[] = [];

/**
 * Builds the automaton; `literals[i]` has id i. Most nodes of a trie over long literals (hashes,
 * domains) have one child, so a node keeps one edge in two number arrays and only a node that
 * branches has a Map of its edges: 23,600 domain-like values make about 500,000 nodes, which one
 * Map each took 170 ms to build.
 */
export function literalIndex(literals: readonly string[]): LiteralIndex {
  // A node's single edge (its character, -1 for none, and the child), or its Map when it branches.
  const edgeChar: number[] = [-1];
  const edgeChild: number[] = [0];
  const branches: Array<Map<number, number> | undefined> = [undefined];
  const fail: number[] = [0];
  const out: Array<readonly number[]> = [NO_OUTPUT];
  const child = (node: number, c: number): number | undefined =>
    edgeChar[node] === c ? edgeChild[node] : branches[node]?.get(c);
  const addChild = (node: number, c: number): number => {
    const made = edgeChar.length;
    edgeChar.push(-1);
    edgeChild.push(0);
    branches.push(undefined);
    fail.push(0);
    out.push(NO_OUTPUT);
    if (edgeChar[node] === -1 && branches[node] === undefined) {
      edgeChar[node] = c;
      edgeChild[node] = made;
    } else {
      let map = branches[node];
      if (!map) {
        map = new Map([[edgeChar[node]!, edgeChild[node]!]]);
        branches[node] = map;
        edgeChar[node] = -1;
      }
      map.set(c, made);
    }
    return made;
  };
  const children = (node: number): Iterable<[number, number]> =>
    branches[node] ?? (edgeChar[node] === -1 ? [] : [[edgeChar[node]!, edgeChild[node]!]]);
  literals.forEach((lit, id) => {
    let node = 0;
    for (let i = 0; i < lit.length; i++) {
      const c = lit.charCodeAt(i);
      node = child(node, c) ?? addChild(node, c);
    }
    out[node] = [...out[node]!, id];
  });
  const queue: number[] = [...children(0)].map(([, n]) => n);
  // The empty literal ends everywhere: the root's outputs hold at the first level too (deeper nodes
  // inherit them through their failure links below).
  if (out[0]!.length > 0) for (const n of queue) out[n] = [...out[n]!, ...out[0]!];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    for (const [c, next] of children(node)) {
      let f = fail[node]!;
      while (f !== 0 && child(f, c) === undefined) f = fail[f]!;
      const target = child(f, c);
      fail[next] = target !== undefined && target !== next ? target : 0;
      const inherited = out[fail[next]!]!;
      if (inherited.length > 0) out[next] = [...out[next]!, ...inherited];
      queue.push(next);
    }
  }
  const step = (node: number, c: number): number => {
    while (node !== 0 && child(node, c) === undefined) node = fail[node]!;
    return child(node, c) ?? 0;
  };
  return {
    scan(text, found) {
      let node = 0;
      for (let i = 0; i < text.length; i++) {
        node = step(node, text.charCodeAt(i));
        const hits = out[node]!;
        for (let k = 0; k < hits.length; k++) found(hits[k]!);
      }
    },
    any(text) {
      if (out[0]!.length > 0) return true;
      let node = 0;
      for (let i = 0; i < text.length; i++) {
        node = step(node, text.charCodeAt(i));
        if (out[node]!.length > 0) return true;
      }
      return false;
    },
  };
}

/** The texts of a field value as field tests read them (strings, numbers, booleans; array elements). */
export function textsOf(value: unknown, each: (text: string) => void): void {
  if (typeof value === 'string') each(value);
  else if (typeof value === 'number') {
    if (Number.isFinite(value)) each(String(value));
  } else if (typeof value === 'boolean') each(value ? 'true' : 'false');
  else if (Array.isArray(value)) for (const v of value) textsOf(v, each);
}

/** The value of a trigger's field on an event. */
export function triggerValue(trigger: Trigger, event: NormalizedEvent): unknown {
  return trigger.get(event);
}
