import type { HuntExpr, HuntRangeOp, HuntValue } from './ast.js';
import {
  countTerm,
  enter,
  expectChar,
  fail,
  isSpace,
  keywordAt,
  readEscape,
  readQuoted,
  skipSpace,
  SPECIAL,
  type Cursor,
} from './cursor.js';

/** What may start a term, for errors. */
const TERM_START = ['field name', 'value', '(', 'not'];

function join(kind: 'and' | 'or', items: HuntExpr[]): HuntExpr {
  return items.length === 1 ? items[0]! : { kind, items };
}

/** `or_expr = and_expr { "or" and_expr }` */
export function parseOr(c: Cursor): HuntExpr {
  const items = [parseAnd(c)];
  for (skipSpace(c); keywordAt(c.text, c.pos) === 'or'; skipSpace(c)) {
    c.pos += 2;
    items.push(parseAnd(c));
  }
  return join('or', items);
}

function parseAnd(c: Cursor): HuntExpr {
  const items = [parseNot(c)];
  for (skipSpace(c); keywordAt(c.text, c.pos) === 'and'; skipSpace(c)) {
    c.pos += 3;
    items.push(parseNot(c));
  }
  return join('and', items);
}

function parseNot(c: Cursor): HuntExpr {
  skipSpace(c);
  if (keywordAt(c.text, c.pos) !== 'not') return parsePrimary(c);
  enter(c, c.pos);
  c.pos += 3;
  const item = parseNot(c);
  c.depth--;
  return { kind: 'not', item };
}

function parsePrimary(c: Cursor): HuntExpr {
  const start = c.pos;
  const ch = c.text[start];
  if (ch === '(') {
    enter(c, start);
    c.pos++;
    const inner = parseOr(c);
    expectChar(c, ')', "')' to close the '(' at " + start);
    c.depth--;
    return inner;
  }
  const keyword = keywordAt(c.text, start);
  if (ch === undefined || ch === ')' || ch === '}' || ch === '|' || keyword !== undefined)
    fail(start, TERM_START, keyword ? `expected a field or value before '${keyword}'` : 'expected a field or value');
  if (ch === '"') return quotedStart(c, start);
  const field = readField(c);
  if (field !== '') {
    skipSpace(c);
    const next = c.text[c.pos];
    if (next === ':') return fieldValue(c, field, start);
    if (next === '<' || next === '>') return range(c, field, start);
  }
  c.pos = start;
  return freeText(c, start);
}

/** A quoted string: a field name when `:` follows, else free text. */
function quotedStart(c: Cursor, start: number): HuntExpr {
  const text = readQuoted(c);
  const after = c.pos;
  skipSpace(c);
  if (c.text[c.pos] === ':' && text !== '') return fieldValue(c, text, start);
  if ((c.text[c.pos] === '<' || c.text[c.pos] === '>') && text !== '') return range(c, text, start);
  c.pos = after;
  countTerm(c, start);
  return { kind: 'match', field: null, value: { quoted: true, text } };
}

function freeText(c: Cursor, start: number): HuntExpr {
  const value = readValue(c, true);
  if (!value.quoted && value.parts.length === 1 && value.parts[0] === '')
    fail(start, TERM_START, 'expected a field or value');
  countTerm(c, start);
  return isStar(value) ? { kind: 'all' } : { kind: 'match', field: null, value };
}

const isStar = (v: HuntValue): boolean => !v.quoted && v.parts.length === 2 && v.parts[0] === '' && v.parts[1] === '';

/** `field ":" ( "(" list ")" | "{" or_expr "}" | "*" | value )` */
function fieldValue(c: Cursor, field: string, start: number): HuntExpr {
  c.pos++;
  skipSpace(c);
  const ch = c.text[c.pos];
  if (ch === '(') {
    enter(c, c.pos);
    const open = c.pos++;
    const list = listOr(c, field);
    expectChar(c, ')', `')' to close the value list at ${open}`);
    c.depth--;
    return list;
  }
  if (ch === '{') return nested(c, field, start);
  return fieldTerm(c, field, start);
}

function nested(c: Cursor, field: string, start: number): HuntExpr {
  if (field.includes('*')) fail(start, ['field name'], 'a nested query needs a field name without wildcards');
  enter(c, c.pos);
  const open = c.pos++;
  countTerm(c, start);
  const query = parseOr(c);
  expectChar(c, '}', `'}' to close the nested query at ${open}`);
  c.depth--;
  return { kind: 'nested', field, query };
}

/** One value of `field`: quoted, unquoted (with wildcards), or `*` (the field exists). */
function fieldTerm(c: Cursor, field: string, start: number): HuntExpr {
  const at = c.pos;
  if (at >= c.text.length || (c.text[at] !== '"' && c.text[at] !== '*' && !startsValue(c)))
    fail(at, ['value', '"', '(', '{', '*'], "expected a value after ':'");
  const value = c.text[at] === '"' ? { quoted: true as const, text: readQuoted(c) } : readValue(c, true);
  countTerm(c, start);
  return isStar(value) ? { kind: 'exists', field } : { kind: 'match', field, value };
}

/** Whether an unquoted value can start here (not a special character or a keyword). */
function startsValue(c: Cursor): boolean {
  const ch = c.text[c.pos];
  if (ch === undefined || isSpace(ch) || keywordAt(c.text, c.pos) !== undefined) return false;
  return ch === '\\' || ch === '*' || !SPECIAL.includes(ch);
}

function listOr(c: Cursor, field: string): HuntExpr {
  const items = [listAnd(c, field)];
  for (skipSpace(c); keywordAt(c.text, c.pos) === 'or'; skipSpace(c)) {
    c.pos += 2;
    items.push(listAnd(c, field));
  }
  return join('or', items);
}

function listAnd(c: Cursor, field: string): HuntExpr {
  const items = [listNot(c, field)];
  for (skipSpace(c); keywordAt(c.text, c.pos) === 'and'; skipSpace(c)) {
    c.pos += 3;
    items.push(listNot(c, field));
  }
  return join('and', items);
}

function listNot(c: Cursor, field: string): HuntExpr {
  skipSpace(c);
  const at = c.pos;
  if (keywordAt(c.text, at) === 'not') {
    enter(c, at);
    c.pos += 3;
    const item = listNot(c, field);
    c.depth--;
    return { kind: 'not', item };
  }
  if (c.text[at] !== '(') return fieldTerm(c, field, at);
  enter(c, at);
  c.pos++;
  const inner = listOr(c, field);
  expectChar(c, ')', `')' to close the '(' at ${at}`);
  c.depth--;
  return inner;
}

/** `field ( "<" | "<=" | ">" | ">=" ) value` — no wildcards in the value. */
function range(c: Cursor, field: string, start: number): HuntExpr {
  const op = (c.text[c.pos + 1] === '=' ? c.text.slice(c.pos, c.pos + 2) : c.text[c.pos]) as HuntRangeOp;
  c.pos += op.length;
  skipSpace(c);
  const at = c.pos;
  if (c.text[at] !== '"' && !startsValue(c)) fail(at, ['value', '"'], `expected a value after '${op}'`);
  if (c.text[at] === '*') fail(at, ['value', '"'], 'a range value cannot be a wildcard');
  const value = c.text[at] === '"' ? { quoted: true as const, text: readQuoted(c) } : readValue(c, false);
  countTerm(c, start);
  return { kind: 'range', field, op, value };
}

/** A field name: no whitespace, special characters escaped, `*` a wildcard over paths; '' when none can start here. */
function readField(c: Cursor): string {
  let out = '';
  for (let ch = c.text[c.pos]; ch !== undefined && !isSpace(ch); ch = c.text[c.pos]) {
    if (ch === '*') {
      out += ch;
      c.pos++;
    } else if (ch === '\\') {
      // A literal `*` cannot be in a field name (`*` there is a wildcard): this is free text.
      if (c.text[c.pos + 1] === '*') return '';
      out += readEscape(c);
    } else if (SPECIAL.includes(ch)) {
      break;
    } else {
      out += ch;
      c.pos++;
    }
  }
  return out;
}

/**
 * An unquoted value: runs to a special character, or to whitespace followed by a keyword, a special
 * character or the end (so inner spaces belong to it, as in KQL). `*` splits it into parts.
 */
function readValue(c: Cursor, wildcards: boolean): HuntValue {
  const parts: string[] = [''];
  for (let ch = c.text[c.pos]; ch !== undefined; ch = c.text[c.pos]) {
    if (isSpace(ch)) {
      const from = c.pos;
      skipSpace(c);
      const next = c.text[c.pos];
      const stop =
        next === undefined || keywordAt(c.text, c.pos) || (SPECIAL.includes(next) && next !== '\\' && next !== '*');
      if (stop) {
        c.pos = from;
        break;
      }
      parts[parts.length - 1] += c.text.slice(from, c.pos);
    } else if (ch === '*') {
      if (!wildcards) fail(c.pos, ['value'], 'a range value cannot hold a wildcard');
      parts.push('');
      c.pos++;
    } else if (ch === '\\') {
      parts[parts.length - 1] += readEscape(c);
    } else if (SPECIAL.includes(ch)) {
      break;
    } else {
      parts[parts.length - 1] += ch;
      c.pos++;
    }
  }
  return { quoted: false, parts };
}
