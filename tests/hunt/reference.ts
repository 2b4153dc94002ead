import type { HuntExpr, HuntValue } from '../../src/detection/hunt/index.js';

/**
 * A deliberately naive evaluator of hunt filters, written from docs/hunting.md's semantics with
 * regular expressions and plain recursion, to hold `compileHunt(q).matches` against.
 */

const INDEX = ['category', 'class', 'source.adapter', 'entityKeys'];
const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function rawAt(v: unknown, segs: string[]): unknown[] {
  if (segs.length === 0) return [v];
  if (Array.isArray(v)) return v.flatMap((x) => rawAt(x, segs));
  if (!isObj(v)) return [];
  for (let k = segs.length; k >= 1; k--) {
    const key = segs.slice(0, k).join('.');
    if (Object.hasOwn(v, key)) return rawAt(v[key], segs.slice(k));
  }
  return [];
}

const flat = (v: unknown): unknown[] => (Array.isArray(v) ? v.flatMap(flat) : [v]);

function allLeaves(v: unknown, path: string): Array<[string, unknown]> {
  if (Array.isArray(v)) return v.flatMap((x) => allLeaves(x, path));
  if (isObj(v)) return Object.keys(v).flatMap((k) => allLeaves(v[k], path === '' ? k : `${path}.${k}`));
  return [[path, v]];
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const globRe = (parts: readonly string[], flags: string): RegExp => new RegExp(`^${parts.map(esc).join('.*')}$`, `s${flags}`);

function leavesOf(root: unknown, field: string): unknown[] {
  if (!field.includes('*')) return rawAt(root, field.split('.')).flatMap(flat);
  const re = globRe(field.split('*'), '');
  return allLeaves(root, '').filter(([p]) => re.test(p)).map(([, l]) => l);
}

const text = (l: unknown): string | undefined =>
  typeof l === 'string' ? l : typeof l === 'number' ? String(l) : typeof l === 'boolean' ? String(l) : undefined;
const num = (l: unknown): number | undefined =>
  typeof l === 'number' ? l : typeof l === 'string' && /^-?\d+(\.\d+)?$/.test(l) ? Number(l) : undefined;

function ipv4(s: string): number | undefined {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  return m && m.slice(1).every((x) => Number(x) < 256) ? m.slice(1).reduce((a, x) => a * 256 + Number(x), 0) : undefined;
}

function leafMatches(leaf: unknown, v: HuntValue, cased: boolean): boolean {
  const s = text(leaf);
  if (!v.quoted && v.parts.length > 1) return s !== undefined && globRe(v.parts, cased ? '' : 'i').test(s);
  const t = v.quoted ? v.text : v.parts[0]!;
  const cidr = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(t);
  if (!cased && cidr) {
    const ip = typeof leaf === 'string' ? ipv4(leaf) : undefined;
    const base = ipv4(cidr[1]!)!;
    const size = 2 ** (32 - Number(cidr[2]));
    return ip !== undefined && Math.floor(ip / size) === Math.floor(base / size);
  }
  if (!cased && !v.quoted && /^-?\d+(\.\d+)?$/.test(t)) return num(leaf) === Number(t);
  if (s === undefined) return false;
  return cased ? s === t : s.toLowerCase() === t.toLowerCase();
}

function rangeMatches(leaf: unknown, op: string, t: string, cased: boolean): boolean {
  const cmp = (a: number | string, b: number | string): boolean =>
    op === '<' ? a < b : op === '<=' ? a <= b : op === '>' ? a > b : a >= b;
  if (/^\d{4}-\d{2}-\d{2}/.test(t)) {
    const at = (x: string): number => Date.parse(/T/.test(x) ? (/Z$/.test(x) ? x : `${x}Z`) : `${x}T00:00:00Z`);
    return typeof leaf === 'string' && /^\d{4}-\d{2}-\d{2}/.test(leaf) && cmp(at(leaf), at(t));
  }
  if (/^-?\d+(\.\d+)?$/.test(t)) return num(leaf) !== undefined && cmp(num(leaf)!, Number(t));
  return typeof leaf === 'string' && (cased ? cmp(leaf, t) : cmp(leaf.toLowerCase(), t.toLowerCase()));
}

/** Whether the filter holds on `root` (an event, or under `{}` one object). */
export function referenceMatches(e: HuntExpr, root: unknown, nested = false): boolean {
  switch (e.kind) {
    case 'all':
      return true;
    case 'and':
      return e.items.every((i) => referenceMatches(i, root, nested));
    case 'or':
      return e.items.some((i) => referenceMatches(i, root, nested));
    case 'not':
      return !referenceMatches(e.item, root, nested);
    case 'match': {
      if (e.field === null) {
        const parts = e.value.quoted ? [e.value.text] : e.value.parts;
        const re = globRe(['', ...parts, ''], 'i');
        return allLeaves(root, '').some(([, l]) => (typeof l === 'string' || typeof l === 'number') && re.test(String(l)));
      }
      const cased = !nested && INDEX.includes(e.field);
      return leavesOf(root, e.field).some((l) => leafMatches(l, e.value, cased));
    }
    case 'exists':
      if (e.field.includes('*')) return leavesOf(root, e.field).some((l) => l !== null);
      return rawAt(root, e.field.split('.')).some((v) => v !== null && v !== undefined);
    case 'range': {
      const t = e.value.quoted ? e.value.text : e.value.parts[0]!;
      const cased = !nested && INDEX.includes(e.field);
      return leavesOf(root, e.field).some((l) => rangeMatches(l, e.op, t, cased));
    }
    case 'nested':
      return rawAt(root, e.field.split('.')).flatMap(flat).some((o) => isObj(o) && referenceMatches(e.query, o, true));
  }
}
