import type { HuntExpr, HuntPipe, HuntQuery, HuntValue } from './ast.js';
import { isSpace, SPECIAL } from './cursor.js';

const CONTROL: Record<string, string> = { '\t': '\\t', '\r': '\\r', '\n': '\\n' };

/** A keyword at a word start would end the value: written `\and`, `\or`, `\not`. */
const KEYWORD_START = /^(and|or|not)/i;

function escapeText(text: string, first: boolean, last: boolean): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const wordStart = (first && i === 0) || isSpace(text[i - 1]);
    const edge = (first && i === 0) || (last && i === text.length - 1);
    if (wordStart && KEYWORD_START.test(text.slice(i))) out += '\\';
    if (SPECIAL.includes(ch)) out += `\\${ch}`;
    else if (ch === ' ' && edge) out += '\\ ';
    else if (Object.hasOwn(CONTROL, ch) && edge) out += CONTROL[ch];
    else out += ch;
  }
  return out;
}

function printQuoted(text: string): string {
  return `"${text.replace(/[\\"]/g, (ch) => `\\${ch}`)}"`;
}

/** Prints a value; an unquoted value's parts are joined by `*`. */
export function printValue(v: HuntValue): string {
  if (v.quoted) return printQuoted(v.text);
  const n = v.parts.length;
  return v.parts.map((p, i) => escapeText(p, i === 0, i === n - 1)).join('*');
}

/** Prints a field name: special characters and spaces escaped, `*` kept as the wildcard. */
export function printField(field: string): string {
  let out = '';
  for (const ch of field) {
    if (ch === '*') out += ch;
    else if (SPECIAL.includes(ch) || ch === ' ') out += `\\${ch}`;
    else out += CONTROL[ch] ?? ch;
  }
  return /^(and|or|not)$/i.test(field) ? `\\${out}` : out;
}

function operand(parent: 'and' | 'or', item: HuntExpr): string {
  const text = printExpr(item);
  const bare = item.kind !== 'and' && item.kind !== 'or';
  return bare || (parent === 'or' && item.kind === 'and') ? text : `(${text})`;
}

/** Prints a filter in canonical form: parentheses only where the tree needs them. */
export function printExpr(e: HuntExpr): string {
  switch (e.kind) {
    case 'all':
      return '*';
    case 'and':
    case 'or':
      return e.items.map((item) => operand(e.kind, item)).join(` ${e.kind} `);
    case 'not':
      return `not ${e.item.kind === 'and' || e.item.kind === 'or' ? `(${printExpr(e.item)})` : printExpr(e.item)}`;
    case 'match':
      return e.field === null ? printValue(e.value) : `${printField(e.field)}:${printValue(e.value)}`;
    case 'exists':
      return `${printField(e.field)}:*`;
    case 'range':
      return `${printField(e.field)} ${e.op} ${printValue(e.value)}`;
    case 'nested':
      return `${printField(e.field)}:{ ${printExpr(e.query)} }`;
    default:
      return e satisfies never;
  }
}

/** A span in the largest unit that divides it. */
export function printSpan(ms: number | 'auto'): string {
  if (ms === 'auto') return 'auto';
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
  ] as const)
    if (ms % size === 0) return `${ms / size}${unit}`;
  return `${ms / 1000}s`;
}

function printPipe(p: HuntPipe): string {
  switch (p.kind) {
    case 'stats': {
      const aggs = p.aggs.map((a) => (a.fn === 'count' ? 'count()' : `dc(${a.field})`)).join(', ');
      return `stats ${aggs}${p.by.length > 0 ? ` by ${p.by.join(', ')}` : ''}`;
    }
    case 'top':
      return `top ${p.limit} ${p.field}`;
    case 'timechart':
      return `timechart span=${printSpan(p.spanMs)} count()${p.by === null ? '' : ` by ${p.by}`}`;
    case 'fields':
      return `fields ${p.fields.join(', ')}`;
    case 'sort':
      return `sort ${p.descending ? '-' : ''}${p.field}`;
    case 'head':
      return `head ${p.limit}`;
    default:
      return p satisfies never;
  }
}

/** The canonical text of a hunt: `parseHunt(printHunt(q))` gives back `q`. */
export function printHunt(q: HuntQuery): string {
  return [printExpr(q.filter), ...q.pipes.map(printPipe)].join(' | ');
}
