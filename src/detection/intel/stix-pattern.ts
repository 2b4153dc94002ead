import {
  normalizeCidr,
  normalizeEmail,
  normalizeDomain,
  normalizeHash,
  normalizeIp,
  normalizeUrl,
} from './normalize.js';
import type { IndicatorTerm } from './types.js';

/**
 * STIX 2.1 patterning (the OASIS grammar, STIXPattern.g4): a parser for the whole syntax, a printer, and the
 * translation of the comparison subset Vigil evaluates into an indicator's alternatives. Whatever falls outside the
 * subset is refused with a reason naming the construct, never dropped silently.
 */

/** Bounds on one pattern: its text, how deep brackets and parentheses nest, how many comparisons it holds. */
export const STIX_PATTERN_LIMITS = { maxLength: 65536, maxDepth: 32, maxComparisons: 1000, maxAlternatives: 1000 };

/** A literal as written: strings decoded, the others kept as their source text. */
export interface StixLiteral {
  readonly kind: 'string' | 'int' | 'float' | 'bool' | 'binary' | 'hex' | 'timestamp';
  readonly text: string;
}

/** One step of an object path after the object type: a property name, or a list index (`*` for any). */
export type StixPathStep = { readonly key: string } | { readonly index: string };

/** `file:hashes.'SHA-256'` is `{ objectType: 'file', steps: [{ key: 'hashes' }, { key: 'SHA-256' }] }`. */
export interface StixObjectPath {
  readonly objectType: string;
  readonly steps: readonly StixPathStep[];
}

/** The comparison operators of the grammar (`==` reads as `=`, `<>` as `!=`). */
export type StixOperator = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'IN' | 'LIKE' | 'MATCHES' | 'ISSUBSET' | 'ISSUPERSET';

/** A comparison expression, inside one observation's brackets. */
export type StixComparison =
  | {
      readonly kind: 'test';
      readonly path: StixObjectPath;
      readonly negated: boolean;
      readonly op: StixOperator;
      readonly value: StixLiteral | readonly StixLiteral[];
    }
  | { readonly kind: 'AND' | 'OR'; readonly left: StixComparison; readonly right: StixComparison };

/** An observation qualifier, as written. */
export type StixQualifier =
  | { readonly kind: 'WITHIN'; readonly seconds: StixLiteral }
  | { readonly kind: 'REPEATS'; readonly times: StixLiteral }
  | { readonly kind: 'START'; readonly start: StixLiteral; readonly stop: StixLiteral };

/** A pattern: observations, their combinations and qualifiers. */
export type StixObservation =
  | { readonly kind: 'observation'; readonly comparison: StixComparison }
  | { readonly kind: 'AND' | 'OR' | 'FOLLOWEDBY'; readonly left: StixObservation; readonly right: StixObservation }
  | { readonly kind: 'qualified'; readonly observation: StixObservation; readonly qualifier: StixQualifier };

type Token =
  | { t: 'punct'; v: string; at: number }
  | { t: 'word'; v: string; at: number }
  | { t: 'ident'; v: string; at: number }
  | { t: 'literal'; lit: StixLiteral; at: number };

class PatternSyntaxError extends Error {}

function fail(at: number, message: string): never {
  throw new PatternSyntaxError(`syntax error at offset ${at}: ${message}`);
}

const WORD = /[A-Za-z0-9_-]/;

/** Reads a quoted run from `i` (at the opening quote); `'` strings take `\'` and `\\`, `"` identifiers take `""`. */
function quoted(src: string, i: number, escapes: boolean): { text: string; end: number } {
  const q = src[i]!;
  let text = '';
  for (let j = i + 1; j < src.length; j++) {
    const c = src[j]!;
    if (escapes && c === '\\') {
      const n = src[j + 1];
      if (n !== "'" && n !== '\\') fail(j, `only \\' and \\\\ may be escaped in a string`);
      text += n;
      j++;
    } else if (c === q) {
      if (!escapes && src[j + 1] === q) {
        text += q;
        j++;
      } else return { text, end: j + 1 };
    } else text += c;
  }
  return fail(i, 'unterminated quote');
}

const TYPED = { b: /^[A-Za-z0-9+/=]*$/, h: /^([0-9A-Fa-f]{2})*$/, t: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/ };
const TYPED_KIND = { b: 'binary', h: 'hex', t: 'timestamp' } as const;

const TWO_CHAR_OPS: Record<string, string> = { '==': '=', '<>': '!=', '!=': '!=', '<=': '<=', '>=': '>=' };

function tokenize(src: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i]!;
    if (/\s/.test(c)) i++;
    else if (src.startsWith('/*', i)) {
      const end = src.indexOf('*/', i + 2);
      if (end === -1) fail(i, 'unterminated comment');
      i = end + 2;
    } else if (src.startsWith('//', i)) {
      const end = src.indexOf('\n', i);
      i = end === -1 ? src.length : end + 1;
    } else if ('[](),:.*'.includes(c) && !(c === '.' && /[0-9]/.test(src[i + 1] ?? ''))) {
      out.push({ t: 'punct', v: c, at: i++ });
    } else if ('=!<>'.includes(c)) {
      const two = src.slice(i, i + 2);
      const op = TWO_CHAR_OPS[two];
      if (op === undefined && c === '!') fail(i, "'!' must be followed by '='");
      out.push({ t: 'punct', v: op ?? c, at: i });
      i += op === undefined ? 1 : 2;
    } else if (c === "'") {
      const { text, end } = quoted(src, i, true);
      out.push({ t: 'literal', lit: { kind: 'string', text }, at: i });
      i = end;
    } else if (c === '"') {
      const { text, end } = quoted(src, i, false);
      out.push({ t: 'ident', v: text, at: i });
      i = end;
    } else if (/[0-9+\-.]/.test(c)) {
      const m = /^[+-]?(?:(0|[1-9][0-9]*)(?![0-9.])|[0-9]*\.[0-9]+)/.exec(src.slice(i, i + 400));
      if (!m) fail(i, `malformed number`);
      const kind = m[0].includes('.') ? 'float' : 'int';
      out.push({ t: 'literal', lit: { kind, text: m[0] }, at: i });
      i += m[0].length;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i + 1;
      while (j < src.length && WORD.test(src[j]!)) j++;
      const word = src.slice(i, j);
      if ((word === 'b' || word === 'h' || word === 't') && src[j] === "'") {
        const end = src.indexOf("'", j + 1);
        if (end === -1) fail(j, 'unterminated quote');
        const text = src.slice(j + 1, end);
        if (!TYPED[word].test(text)) fail(i, `malformed ${TYPED_KIND[word]} literal`);
        out.push({ t: 'literal', lit: { kind: TYPED_KIND[word], text }, at: i });
        i = end + 1;
      } else {
        const upper = word.toUpperCase();
        const lit = upper === 'TRUE' || upper === 'FALSE';
        out.push(
          lit
            ? { t: 'literal', lit: { kind: 'bool', text: word.toLowerCase() }, at: i }
            : { t: 'word', v: word, at: i },
        );
        i = j;
      }
    } else fail(i, `unexpected character '${c}'`);
  }
  return out;
}

/** A recursive-descent parser over the tokens, bounded in depth and comparison count. */
function parser(tokens: Token[], end: number) {
  let pos = 0;
  let depth = 0;
  let comparisons = 0;
  const peek = () => tokens[pos];
  const at = () => peek()?.at ?? end;
  const isPunct = (v: string) => peek()?.t === 'punct' && (peek() as { v: string }).v === v;
  const isWord = (w: string) => peek()?.t === 'word' && (peek() as { v: string }).v.toUpperCase() === w;
  const expectPunct = (v: string) => {
    if (!isPunct(v)) fail(at(), `expected '${v}'`);
    pos++;
  };
  const enter = () => {
    if (++depth > STIX_PATTERN_LIMITS.maxDepth) fail(at(), `nested deeper than ${STIX_PATTERN_LIMITS.maxDepth}`);
  };
  const literal = (): StixLiteral => {
    const tok = peek();
    if (tok?.t !== 'literal') fail(at(), 'expected a literal');
    pos++;
    return tok.lit;
  };

  function binary<T>(next: () => T, ops: string[], make: (op: string, l: T, r: T) => T): T {
    let left = next();
    for (;;) {
      const op = ops.find((o) => isWord(o));
      if (!op) return left;
      pos++;
      left = make(op, left, next());
    }
  }

  const observations = (): StixObservation =>
    binary(() => binary(() => binary(observation, ['AND'], mkObs), ['OR'], mkObs), ['FOLLOWEDBY'], mkObs);
  const mkObs = (op: string, left: StixObservation, right: StixObservation) =>
    ({ kind: op, left, right }) as StixObservation;

  function observation(): StixObservation {
    enter();
    let obs: StixObservation;
    if (isPunct('[')) {
      pos++;
      obs = { kind: 'observation', comparison: comparison() };
      expectPunct(']');
    } else if (isPunct('(')) {
      pos++;
      obs = observations();
      expectPunct(')');
    } else fail(at(), "expected '[' or '('");
    depth--;
    for (;;) {
      if (isWord('WITHIN')) {
        pos++;
        const seconds = literal();
        if (!isWord('SECONDS')) fail(at(), "expected 'SECONDS'");
        pos++;
        obs = { kind: 'qualified', observation: obs, qualifier: { kind: 'WITHIN', seconds } };
      } else if (isWord('REPEATS')) {
        pos++;
        const times = literal();
        if (!isWord('TIMES')) fail(at(), "expected 'TIMES'");
        pos++;
        obs = { kind: 'qualified', observation: obs, qualifier: { kind: 'REPEATS', times } };
      } else if (isWord('START')) {
        pos++;
        const start = literal();
        if (!isWord('STOP')) fail(at(), "expected 'STOP'");
        pos++;
        obs = { kind: 'qualified', observation: obs, qualifier: { kind: 'START', start, stop: literal() } };
      } else return obs;
    }
  }

  const comparison = (): StixComparison => binary(() => binary(test, ['AND'], mkCmp), ['OR'], mkCmp);
  const mkCmp = (op: string, left: StixComparison, right: StixComparison) =>
    ({ kind: op, left, right }) as StixComparison;

  function pathKey(): string {
    const tok = peek();
    if (tok?.t === 'word' || tok?.t === 'ident') {
      pos++;
      return tok.v;
    }
    if (tok?.t === 'literal' && tok.lit.kind === 'string') {
      pos++;
      return tok.lit.text;
    }
    return fail(at(), 'expected a property name');
  }

  function objectPath(): StixObjectPath {
    const objectType = pathKey();
    expectPunct(':');
    const steps: StixPathStep[] = [{ key: pathKey() }];
    for (;;) {
      if (isPunct('.')) {
        pos++;
        steps.push({ key: pathKey() });
      } else if (isPunct('[')) {
        pos++;
        const tok = peek();
        if (isPunct('*')) steps.push({ index: '*' });
        else if (tok?.t === 'literal' && tok.lit.kind === 'int') steps.push({ index: tok.lit.text });
        else fail(at(), "expected an integer or '*'");
        pos++;
        expectPunct(']');
      } else return { objectType, steps };
    }
  }

  const OPS = ['IN', 'LIKE', 'MATCHES', 'ISSUBSET', 'ISSUPERSET'] as const;

  function test(): StixComparison {
    if (isPunct('(')) {
      enter();
      pos++;
      const inner = comparison();
      expectPunct(')');
      depth--;
      return inner;
    }
    if (++comparisons > STIX_PATTERN_LIMITS.maxComparisons) {
      fail(at(), `more than ${STIX_PATTERN_LIMITS.maxComparisons} comparisons`);
    }
    const path = objectPath();
    const negated = isWord('NOT');
    if (negated) pos++;
    const tok = peek();
    const word = OPS.find((o) => isWord(o));
    if (word) {
      pos++;
      if (word !== 'IN') return { kind: 'test', path, negated, op: word, value: literal() };
      expectPunct('(');
      const values: StixLiteral[] = [];
      while (!isPunct(')')) {
        if (values.length > 0) expectPunct(',');
        values.push(literal());
        if (++comparisons > STIX_PATTERN_LIMITS.maxComparisons) fail(at(), 'too many set members');
      }
      pos++;
      return { kind: 'test', path, negated, op: 'IN', value: values };
    }
    if (tok?.t === 'punct' && ['=', '!=', '<', '<=', '>', '>='].includes(tok.v)) {
      pos++;
      return { kind: 'test', path, negated, op: tok.v as StixOperator, value: literal() };
    }
    return fail(at(), 'expected a comparison operator');
  }

  return {
    pattern(): StixObservation {
      const result = observations();
      if (pos < tokens.length) fail(at(), 'unexpected input after the pattern');
      return result;
    },
  };
}

/** Parses a STIX pattern into its syntax tree, or says where and why it is malformed or too large. */
export function parseStixPattern(text: string): { ok: true; pattern: StixObservation } | { ok: false; reason: string } {
  if (typeof text !== 'string') return { ok: false, reason: 'the pattern is not a string' };
  if (text.length > STIX_PATTERN_LIMITS.maxLength) {
    return { ok: false, reason: `the pattern is longer than ${STIX_PATTERN_LIMITS.maxLength} characters` };
  }
  try {
    return { ok: true, pattern: parser(tokenize(text), text.length).pattern() };
  } catch (e) {
    if (e instanceof PatternSyntaxError) return { ok: false, reason: e.message };
    throw e;
  }
}

const BARE = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const KEYWORDS = new Set([
  ...['AND', 'OR', 'NOT', 'FOLLOWEDBY', 'LIKE', 'MATCHES', 'ISSUPERSET', 'ISSUBSET', 'LAST', 'IN'],
  ...['START', 'STOP', 'SECONDS', 'TRUE', 'FALSE', 'WITHIN', 'REPEATS', 'TIMES'],
]);

const quote = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const key = (s: string) => (BARE.test(s) && !KEYWORDS.has(s.toUpperCase()) ? s : quote(s));

function printLiteral(l: StixLiteral): string {
  switch (l.kind) {
    case 'string':
      return quote(l.text);
    case 'binary':
      return `b'${l.text}'`;
    case 'hex':
      return `h'${l.text}'`;
    case 'timestamp':
      return `t'${l.text}'`;
    default:
      return l.text;
  }
}

/** The object path as STIX writes it: `file:hashes.'SHA-256'`, `network-traffic:dst_ref.value`. */
export function printObjectPath(p: StixObjectPath): string {
  const steps = p.steps.map((s, i) => ('key' in s ? (i === 0 ? key(s.key) : `.${key(s.key)}`) : `[${s.index}]`));
  return `${key(p.objectType)}:${steps.join('')}`;
}

function printComparison(c: StixComparison): string {
  if (c.kind === 'test') {
    const value = Array.isArray(c.value)
      ? `(${(c.value as StixLiteral[]).map(printLiteral).join(', ')})`
      : printLiteral(c.value as StixLiteral);
    return `${printObjectPath(c.path)}${c.negated ? ' NOT' : ''} ${c.op} ${value}`;
  }
  const side = (s: StixComparison, left: boolean) =>
    s.kind === 'test' || (left && s.kind === c.kind) ? printComparison(s) : `(${printComparison(s)})`;
  return `${side(c.left, true)} ${c.kind} ${side(c.right, false)}`;
}

/** Prints a syntax tree back as a pattern; parsing the result gives the same tree. */
export function printStixPattern(o: StixObservation): string {
  switch (o.kind) {
    case 'observation':
      return `[${printComparison(o.comparison)}]`;
    case 'qualified': {
      const inner = o.observation.kind === 'observation' || o.observation.kind === 'qualified';
      const body = inner ? printStixPattern(o.observation) : `(${printStixPattern(o.observation)})`;
      const q = o.qualifier;
      const tail =
        q.kind === 'WITHIN'
          ? `WITHIN ${printLiteral(q.seconds)} SECONDS`
          : q.kind === 'REPEATS'
            ? `REPEATS ${printLiteral(q.times)} TIMES`
            : `START ${printLiteral(q.start)} STOP ${printLiteral(q.stop)}`;
      return `${body} ${tail}`;
    }
    default: {
      const side = (s: StixObservation, left: boolean) =>
        s.kind === 'observation' || s.kind === 'qualified' || (left && s.kind === o.kind)
          ? printStixPattern(s)
          : `(${printStixPattern(s)})`;
      return `${side(o.left, true)} ${o.kind} ${side(o.right, false)}`;
    }
  }
}

/** A pattern's alternatives, or why it has none Vigil can evaluate. */
export type Terms = { ok: true; anyOf: IndicatorTerm[][] } | { ok: false; reason: string };

const SUPPORTED_PATHS =
  'ipv4-addr:value, ipv6-addr:value, domain-name:value, url:value, file:hashes (MD5, SHA-1, SHA-256), ' +
  'email-addr:value, email-message:from_ref.value, network-traffic:src_ref.value and dst_ref.value';

type PathKind = 'ipv4-addr' | 'ipv6-addr' | 'address' | 'domain' | 'url' | 'email' | 'md5' | 'sha1' | 'sha256';

const PATHS: Record<string, PathKind> = {
  'ipv4-addr:value': 'ipv4-addr',
  'ipv6-addr:value': 'ipv6-addr',
  'network-traffic:src_ref.value': 'address',
  'network-traffic:dst_ref.value': 'address',
  'domain-name:value': 'domain',
  'url:value': 'url',
  'email-addr:value': 'email',
  'email-message:from_ref.value': 'email',
};

const HASHES: Record<string, 'md5' | 'sha1' | 'sha256'> = { MD5: 'md5', SHA1: 'sha1', SHA256: 'sha256' };

/** What an object path names, or undefined when Vigil has no event field for it. */
function pathKind(p: StixObjectPath): PathKind | undefined {
  const keys = p.steps.map((s) => ('key' in s ? s.key : undefined));
  if (keys.includes(undefined)) return undefined;
  const type = p.objectType.toLowerCase();
  if (type === 'file' && keys.length === 2 && keys[0] === 'hashes')
    return HASHES[keys[1]!.toUpperCase().replace('-', '')];
  return PATHS[`${type}:${keys.join('.')}`];
}

/** The term a value makes on a path of this kind, or why it does not make one. */
function termOf(kind: PathKind, value: string, path: string, subset: boolean): IndicatorTerm | string {
  const bad = (what: string) => `'${value.slice(0, 200)}' is not ${what} (${path})`;
  if (kind === 'ipv4-addr' || kind === 'ipv6-addr' || kind === 'address') {
    if (subset || value.includes('/')) {
      const cidr = normalizeCidr(value);
      const family = cidr === undefined ? undefined : cidr.includes(':') ? 'ipv6-addr' : 'ipv4-addr';
      if (!cidr || (kind !== 'address' && family !== kind)) return bad(`a valid ${kind} CIDR range`);
      return { type: 'cidr', value: cidr };
    }
    const ip = normalizeIp(value);
    if (!ip || (kind === 'ipv4-addr' && ip.type !== 'ipv4')) return bad(`a valid ${kind === 'address' ? 'IP' : kind}`);
    return ip;
  }
  if (subset) return `ISSUBSET applies to addresses only, not to ${path}`;
  const normalized =
    kind === 'domain'
      ? normalizeDomain(value)
      : kind === 'url'
        ? normalizeUrl(value)
        : kind === 'email'
          ? normalizeEmail(value)
          : normalizeHash(kind, value);
  if (normalized === undefined) return bad(`a valid ${kind === 'domain' ? 'domain name' : kind}`);
  return { type: kind === 'domain' ? 'domain' : kind, value: normalized };
}

/** One comparison as alternatives of one term each (`IN` gives one per member). */
function testTerms(c: Extract<StixComparison, { kind: 'test' }>): Terms {
  const path = printObjectPath(c.path);
  if (c.negated) return { ok: false, reason: `NOT is not supported (${path} NOT ${c.op})` };
  if (c.op !== '=' && c.op !== 'IN' && c.op !== 'ISSUBSET') {
    return { ok: false, reason: `the operator ${c.op} is not supported (${path}); Vigil evaluates =, IN and ISSUBSET` };
  }
  const kind = pathKind(c.path);
  if (!kind) return { ok: false, reason: `the object path ${path} is not supported; Vigil matches ${SUPPORTED_PATHS}` };
  const values = Array.isArray(c.value) ? (c.value as StixLiteral[]) : [c.value as StixLiteral];
  const anyOf: IndicatorTerm[][] = [];
  for (const v of values) {
    if (v.kind !== 'string') return { ok: false, reason: `${path} is compared with a ${v.kind} literal, not a string` };
    const term = termOf(kind, v.text, path, c.op === 'ISSUBSET');
    if (typeof term === 'string') return { ok: false, reason: term };
    anyOf.push([term]);
  }
  if (anyOf.length === 0) return { ok: false, reason: `${path} IN () is an empty set: it matches nothing` };
  return { ok: true, anyOf };
}

const termKey = (t: IndicatorTerm) => `${t.type}\u0000${t.value}`;

/** AND of two alternative lists: every pair joined, duplicates removed, bounded. */
function cross(a: IndicatorTerm[][], b: IndicatorTerm[][]): Terms {
  if (a.length * b.length > STIX_PATTERN_LIMITS.maxAlternatives) {
    return {
      ok: false,
      reason: `the pattern expands to more than ${STIX_PATTERN_LIMITS.maxAlternatives} alternatives`,
    };
  }
  const anyOf = a.flatMap((x) =>
    b.map((y) => {
      const seen = new Set(x.map(termKey));
      return [...x, ...y.filter((t) => !seen.has(termKey(t)))];
    }),
  );
  return { ok: true, anyOf };
}

/** OR of two alternative lists, bounded. */
function union(a: IndicatorTerm[][], b: IndicatorTerm[][]): Terms {
  if (a.length + b.length > STIX_PATTERN_LIMITS.maxAlternatives) {
    return {
      ok: false,
      reason: `the pattern expands to more than ${STIX_PATTERN_LIMITS.maxAlternatives} alternatives`,
    };
  }
  return { ok: true, anyOf: [...a, ...b] };
}

function comparisonTerms(c: StixComparison): Terms {
  if (c.kind === 'test') return testTerms(c);
  const left = comparisonTerms(c.left);
  if (!left.ok) return left;
  const right = comparisonTerms(c.right);
  if (!right.ok) return right;
  return c.kind === 'AND' ? cross(left.anyOf, right.anyOf) : union(left.anyOf, right.anyOf);
}

function observationTerms(o: StixObservation): Terms {
  switch (o.kind) {
    case 'observation':
      return comparisonTerms(o.comparison);
    case 'qualified':
      return {
        ok: false,
        reason: `the qualifier ${o.qualifier.kind} is not supported: Vigil matches one event at a time`,
      };
    case 'AND':
    case 'FOLLOWEDBY':
      return {
        ok: false,
        reason:
          `observations joined by ${o.kind} are not supported: Vigil matches one event at a time ` +
          '(one observation [...], or several joined by OR)',
      };
    case 'OR': {
      const left = observationTerms(o.left);
      if (!left.ok) return left;
      const right = observationTerms(o.right);
      if (!right.ok) return right;
      return union(left.anyOf, right.anyOf);
    }
  }
}

/**
 * The alternatives a STIX pattern matches, in the subset Vigil evaluates: `=`, `IN (...)` and `ISSUBSET` (a CIDR,
 * on addresses) on the paths listed in SUPPORTED_PATHS, `AND`/`OR` inside one observation, and observations joined
 * by `OR`. Anything else (other operators, `NOT`, qualifiers, `AND`/`FOLLOWEDBY` between observations, other paths,
 * malformed values) gives the reason it is refused. Duplicate alternatives are merged.
 */
export function stixPatternTerms(text: string): Terms {
  const parsed = parseStixPattern(text);
  if (!parsed.ok) return parsed;
  const terms = observationTerms(parsed.pattern);
  if (!terms.ok) return terms;
  const seen = new Set<string>();
  const anyOf = terms.anyOf.filter((alt) => {
    const k = alt.map(termKey).sort().join('\u0001');
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  return { ok: true, anyOf };
}
