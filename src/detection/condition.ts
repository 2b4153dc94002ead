import { fail, ok, type Result } from './types.js';
import { compilePattern, type PatternToken } from './wildcard.js';

/** A parsed Sigma condition. `of` covers `1 of x*`, `all of x*`, `1 of them`, `all of them`. */
export type ConditionNode =
  | { readonly kind: 'id'; readonly name: string }
  | { readonly kind: 'not'; readonly operand: ConditionNode }
  | { readonly kind: 'and' | 'or'; readonly operands: readonly ConditionNode[] }
  | { readonly kind: 'of'; readonly quantifier: 'one' | 'all'; readonly pattern: string };

/** Bounds that keep parsing cheap and the recursion shallow whatever the text. */
export const CONDITION_LIMITS = { length: 4096, depth: 64 } as const;

const KEYWORDS = new Set(['and', 'or', 'not', 'of']);
const QUANTIFIERS: Readonly<Record<string, 'one' | 'all'>> = { '1': 'one', any: 'one', all: 'all' };

function tokenize(text: string): string[] | string {
  const tokens = text.match(/\(|\)|[^\s()]+/g) ?? [];
  const piped = tokens.find((t) => t.includes('|'));
  if (piped !== undefined) return `aggregation expressions ('${piped}') are not supported; use a correlation rule`;
  return tokens;
}

interface Parser {
  readonly tokens: string[];
  pos: number;
  depth: number;
}

function peek(p: Parser): string | undefined {
  return p.tokens[p.pos];
}

function isWord(token: string | undefined, word: string): boolean {
  return token !== undefined && token.toLowerCase() === word;
}

function parseBinary(p: Parser, op: 'or' | 'and'): ConditionNode | string {
  const parseOperand = (): ConditionNode | string => (op === 'or' ? parseBinary(p, 'and') : parseUnary(p));
  const first = parseOperand();
  if (typeof first === 'string') return first;
  const operands = [first];
  while (isWord(peek(p), op)) {
    p.pos++;
    const next = parseOperand();
    if (typeof next === 'string') return next;
    operands.push(next);
  }
  return operands.length === 1 ? first : { kind: op, operands };
}

function parseUnary(p: Parser): ConditionNode | string {
  if (++p.depth > CONDITION_LIMITS.depth) return `nested more than ${CONDITION_LIMITS.depth} levels deep`;
  try {
    if (!isWord(peek(p), 'not')) return parsePrimary(p);
    p.pos++;
    const operand = parseUnary(p);
    return typeof operand === 'string' ? operand : { kind: 'not', operand };
  } finally {
    p.depth--;
  }
}

function parsePrimary(p: Parser): ConditionNode | string {
  const token = peek(p);
  if (token === undefined) return 'unexpected end of condition';
  if (token === '(') {
    p.pos++;
    const inner = parseBinary(p, 'or');
    if (typeof inner === 'string') return inner;
    if (peek(p) !== ')') return `missing ')'${peek(p) === undefined ? '' : ` before '${peek(p)}'`}`;
    p.pos++;
    return inner;
  }
  if (token === ')') return `unexpected ')'`;
  const quantifier = QUANTIFIERS[token.toLowerCase()];
  if (quantifier && isWord(p.tokens[p.pos + 1], 'of')) {
    const pattern = p.tokens[p.pos + 2];
    if (pattern === undefined || pattern === '(' || pattern === ')' || KEYWORDS.has(pattern.toLowerCase()))
      return `'${token} of' needs a search identifier pattern or 'them'`;
    p.pos += 3;
    return { kind: 'of', quantifier, pattern: pattern.toLowerCase() === 'them' ? 'them' : pattern };
  }
  if (KEYWORDS.has(token.toLowerCase())) return `unexpected '${token}'`;
  p.pos++;
  return { kind: 'id', name: token };
}

/** Parses one condition string (precedence: or < and < not < `x of` < parentheses). Never throws. */
export function parseCondition(text: string): Result<ConditionNode> {
  if (text.length > CONDITION_LIMITS.length) return fail(`condition longer than ${CONDITION_LIMITS.length} characters`);
  const tokens = tokenize(text);
  if (typeof tokens === 'string') return fail(tokens);
  if (tokens.length === 0) return fail('empty condition');
  const parser: Parser = { tokens, pos: 0, depth: 0 };
  const node = parseBinary(parser, 'or');
  if (typeof node === 'string') return fail(node);
  const rest = peek(parser);
  return rest === undefined ? ok(node) : fail(`unexpected '${rest}'`);
}

/** Parses a `condition:` value: a string, or a list of strings meaning their OR. */
export function parseConditionValue(value: unknown): Result<ConditionNode> {
  const texts = Array.isArray(value) ? value : [value];
  if (texts.length === 0 || !texts.every((t): t is string => typeof t === 'string'))
    return fail('condition must be a string or a list of strings');
  const nodes: ConditionNode[] = [];
  for (const text of texts) {
    const parsed = parseCondition(text);
    if (!parsed.ok) return parsed;
    nodes.push(parsed.value);
  }
  return ok(nodes.length === 1 ? nodes[0]! : { kind: 'or', operands: nodes });
}

function identifiersFor(pattern: string, identifiers: readonly string[]): string[] {
  if (pattern === 'them') return identifiers.filter((name) => !name.startsWith('_'));
  const tokens: PatternToken[] = pattern
    .split('*')
    .flatMap((text, i): PatternToken[] => [
      ...(i > 0 ? [{ kind: 'any' } as const] : []),
      ...(text === '' ? [] : [{ kind: 'text', text } as const]),
    ]);
  const test = compilePattern(tokens, true);
  return identifiers.filter((name) => test(name));
}

/** A compiled condition over some subject (an event), given one predicate per search identifier. */
export type Predicate<T> = (subject: T) => boolean;

function allOf<T>(parts: Predicate<T>[]): Predicate<T> {
  return (x) => {
    for (const f of parts) if (!f(x)) return false;
    return true;
  };
}

function anyOf<T>(parts: Predicate<T>[]): Predicate<T> {
  return (x) => {
    for (const f of parts) if (f(x)) return true;
    return false;
  };
}

/** Binds a parsed condition to search identifiers; unknown names and empty patterns are errors. */
export function bindCondition<T>(
  node: ConditionNode,
  identifiers: readonly string[],
  leaf: (name: string) => Predicate<T>,
): Result<Predicate<T>> {
  switch (node.kind) {
    case 'id':
      return identifiers.includes(node.name) ? ok(leaf(node.name)) : fail(`unknown search identifier '${node.name}'`);
    case 'not': {
      const inner = bindCondition(node.operand, identifiers, leaf);
      if (!inner.ok) return inner;
      const f = inner.value;
      return ok((x) => !f(x));
    }
    case 'and':
    case 'or': {
      const parts: Predicate<T>[] = [];
      for (const operand of node.operands) {
        const bound = bindCondition(operand, identifiers, leaf);
        if (!bound.ok) return bound;
        parts.push(bound.value);
      }
      return ok(node.kind === 'and' ? allOf(parts) : anyOf(parts));
    }
    case 'of': {
      const names = identifiersFor(node.pattern, identifiers);
      if (names.length === 0) return fail(`'${node.pattern}' matches no search identifier`);
      const parts = names.map(leaf);
      return ok(node.quantifier === 'all' ? allOf(parts) : anyOf(parts));
    }
  }
}

/** The search identifiers a condition mentions (patterns expanded), for the match explanation. */
export function referencedIdentifiers(node: ConditionNode, identifiers: readonly string[]): string[] {
  switch (node.kind) {
    case 'id':
      return [node.name];
    case 'not':
      return referencedIdentifiers(node.operand, identifiers);
    case 'and':
    case 'or':
      return [...new Set(node.operands.flatMap((n) => referencedIdentifiers(n, identifiers)))];
    case 'of':
      return identifiersFor(node.pattern, identifiers);
  }
}
